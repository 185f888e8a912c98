import MiniSearch from "minisearch";
import type { Logger } from "../logging/create-logger.js";
import { assertSafeId } from "../shared/safe-id.js";
import { readNoteDocuments, turnDocument, type MemoryDoc } from "./memory-documents.js";
import { fuzziness, processTerm, tokenize, truncate, usePrefix } from "./memory-terms.js";
import { userNotesDir } from "./session-paths.js";
import type { HistoryEntry, HistoryReader, MemoryIndex, MemorySnippet } from "./store-types.js";

export interface MemoryIndexDeps {
  logger?: Logger;
  /** Newest turns kept per user (older ones are dropped from the index, not from disk). */
  maxTurns?: number;
  /** Note sections kept per user. */
  maxNoteDocs?: number;
  maxNoteFileBytes?: number;
  /** Text indexed per document. */
  maxDocChars?: number;
  /** Longest snippet returned, before the budget cuts the last one. */
  maxSnippetChars?: number;
  /** Most snippets one search returns. */
  maxResults?: number;
  /** Users whose index stays in memory; the least recently ensured is dropped (rebuilt on demand). */
  maxUsers?: number;
}

/** ≈ 4 characters a token, the rule of thumb the budget is given in. */
export const CHARS_PER_TOKEN = 4;

/** Snippets shorter than this are not worth the tokens; the budget's tail stays unused. */
const MIN_TAIL_CHARS = 24;

interface UserIndex {
  index: MiniSearch<MemoryDoc>;
  /** Turn document ids, oldest first: the front is dropped when over maxTurns. */
  turns: string[];
  ready: Promise<void>;
}

/**
 * Full-text memory per user (minisearch, BM25 ranking), in memory: built once per process from
 * the user's past turns across all sessions plus `data_dir/memory/<user>/*.md`, then kept current
 * by addTurn. Bounded: newest `maxTurns` turns, `maxNoteDocs` note sections, `maxDocChars` per
 * document, `maxUsers` users.
 */
export class MinisearchMemoryIndex implements MemoryIndex {
  private readonly users = new Map<string, UserIndex>();
  private readonly logger: Logger | undefined;
  private readonly limits: Required<Omit<MemoryIndexDeps, "logger">>;

  constructor(
    private readonly dataDir: string,
    private readonly reader: HistoryReader,
    deps: MemoryIndexDeps = {},
  ) {
    this.logger = deps.logger;
    this.limits = {
      maxTurns: deps.maxTurns ?? 5_000,
      maxNoteDocs: deps.maxNoteDocs ?? 2_000,
      maxNoteFileBytes: deps.maxNoteFileBytes ?? 1024 * 1024,
      maxDocChars: deps.maxDocChars ?? 2_000,
      maxSnippetChars: deps.maxSnippetChars ?? 600,
      maxResults: deps.maxResults ?? 8,
      maxUsers: deps.maxUsers ?? 32,
    };
  }

  /** Idempotent: concurrent and repeated calls share one build; a failed build is retried next time. */
  async ensureUser(userId: string): Promise<void> {
    assertSafeId("user_id", userId);
    const existing = this.users.get(userId);
    if (existing) {
      this.users.delete(userId); // re-insert: most recently used last
      this.users.set(userId, existing);
      return existing.ready;
    }
    const state: UserIndex = { index: newIndex(), turns: [], ready: Promise.resolve() };
    state.ready = this.build(userId, state).catch((error: unknown) => {
      if (this.users.get(userId) === state) this.users.delete(userId);
      throw error;
    });
    this.users.set(userId, state);
    this.evictBeyondLimit();
    return state.ready;
  }

  search(userId: string, query: string, budgetTokens: number, excludeSource?: (source: string) => boolean): MemorySnippet[] {
    const state = this.users.get(userId);
    let budget = Math.floor(budgetTokens * CHARS_PER_TOKEN);
    if (!state || query.trim() === "" || budget <= 0) return [];
    const results = state.index.search(query, {
      prefix: usePrefix,
      fuzzy: fuzziness,
      boost: { title: 2 },
      combineWith: "OR",
    });
    const snippets: MemorySnippet[] = [];
    for (const result of results) {
      if (snippets.length >= this.limits.maxResults || budget < MIN_TAIL_CHARS) break;
      const doc = state.index.getStoredFields(result.id) as Pick<MemoryDoc, "title" | "text" | "source"> | undefined;
      if (!doc || excludeSource?.(doc.source) === true) continue;
      const full = doc.title === "" ? doc.text : `${doc.title}\n${doc.text}`;
      const text = truncate(truncate(full, this.limits.maxSnippetChars), budget);
      snippets.push({ text, source: doc.source, score: result.score });
      budget -= text.length;
    }
    return snippets;
  }

  /** Ignored for a user not ensured yet: ensureUser will read the turn from disk. */
  addTurn(userId: string, sessionId: string, entry: HistoryEntry): void {
    const state = this.users.get(userId);
    if (!state) return;
    const doc = turnDocument(sessionId, entry, this.limits);
    if (doc && !state.index.has(doc.id)) {
      state.index.add(doc);
      state.turns.push(doc.id);
      this.trimTurns(state);
    }
  }

  /** A deleted session's turns leave the index (a user not ensured yet reads only what is on disk). */
  forgetSession(userId: string, sessionId: string): void {
    const state = this.users.get(userId);
    if (!state) return;
    const prefix = `turn:${sessionId}:`;
    for (const id of state.turns.filter((turn) => turn.startsWith(prefix))) {
      if (state.index.has(id)) state.index.discard(id);
    }
    state.turns = state.turns.filter((turn) => !turn.startsWith(prefix));
  }

  /** Documents held for a user (0 when not ensured); for tests and diagnostics. */
  size(userId: string): number {
    return this.users.get(userId)?.index.documentCount ?? 0;
  }

  private async build(userId: string, state: UserIndex): Promise<void> {
    const started = Date.now();
    const turnDocs: MemoryDoc[] = [];
    for (const sessionId of await this.reader.listSessions(userId)) {
      try {
        for (const entry of await this.reader.readTurns(userId, sessionId)) {
          const doc = turnDocument(sessionId, entry, this.limits);
          if (doc) turnDocs.push(doc);
        }
      } catch (error) {
        this.logger?.warn({ user_id: userId, session_id: sessionId, err: error }, "memory: skipped a session whose history could not be read");
      }
    }
    // Newest last; keep only the newest maxTurns before anything is indexed.
    turnDocs.sort((a, b) => timeOf(a.at) - timeOf(b.at));
    const newest = turnDocs.slice(-this.limits.maxTurns);
    const notes = await readNoteDocuments(userNotesDir(this.dataDir, userId), this.limits, (file, why) =>
      this.logger?.warn({ user_id: userId, file }, `memory: note ${why}`),
    ).catch((error: unknown) => {
      this.logger?.warn({ user_id: userId, err: error }, "memory: notes folder could not be read; indexing turns only");
      return [];
    });
    // Turns added by addTurn while we were reading are newer than anything on disk we saw.
    const fresh = newest.filter((doc) => !state.index.has(doc.id));
    state.index.addAll(fresh);
    state.index.addAll(notes.filter((doc) => !state.index.has(doc.id)));
    state.turns = [...fresh.map((doc) => doc.id), ...state.turns];
    this.trimTurns(state);
    this.logger?.debug({ user_id: userId, turns: state.turns.length, notes: notes.length, ms: Date.now() - started }, "memory index built");
  }

  private trimTurns(state: UserIndex): void {
    while (state.turns.length > this.limits.maxTurns) {
      const oldest = state.turns.shift();
      if (oldest !== undefined && state.index.has(oldest)) state.index.discard(oldest);
    }
  }

  private evictBeyondLimit(): void {
    for (const userId of this.users.keys()) {
      if (this.users.size <= this.limits.maxUsers) return;
      this.users.delete(userId);
    }
  }
}

function newIndex(): MiniSearch<MemoryDoc> {
  return new MiniSearch<MemoryDoc>({
    fields: ["title", "text"],
    storeFields: ["title", "text", "source"],
    tokenize,
    processTerm,
  });
}

function timeOf(iso: string): number {
  const time = Date.parse(iso);
  return Number.isNaN(time) ? 0 : time;
}
