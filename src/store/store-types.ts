import type { ChatMessage, ToolCall } from "../shared/conversation/chat-message.js";

/** One persisted history line: the messages a finished turn added to the conversation. */
export interface HistoryEntry {
  trace_id: string;
  agent: string;
  /** ISO time the turn finished. */
  at: string;
  messages: ChatMessage[];
}

export interface PendingToolCall {
  call: ToolCall;
  /** Arguments parsed and validated; run as-is on approval. */
  args: Record<string, unknown>;
  server: string;
  /** Set when the call is running and its server waits on the user's answer (not approval). */
  elicitation?: PendingElicitation;
}

/** An MCP server's form-mode question a paused turn waits on (the tools layer's ElicitationRequest). */
export interface PendingElicitation {
  server: string;
  message: string;
  requested_schema: Record<string, unknown>;
}

/**
 * The loop state after each step (L2 checkpoint): enough to resume an interrupted or paused turn
 * without re-running completed tool calls.
 */
export interface Checkpoint {
  version: 1;
  trace_id: string;
  agent: string;
  user_input: string;
  /** Messages of this turn so far (user message first), including completed tool results. */
  messages: ChatMessage[];
  /** The next step to run. */
  step: number;
  parse_errors: number;
  status: "running" | "paused";
  pending: PendingToolCall | null;
  updated_at: string;
}

export interface LoadedHistory {
  messages: ChatMessage[];
  /** e.g. "session history was corrupt at line 7; repaired to the last good entry". */
  warnings: string[];
}

/** Sessions on disk under app.data_dir, one folder per user and session. */
export interface SessionStore {
  loadHistory(userId: string, sessionId: string): Promise<LoadedHistory>;
  /** Appends one finished turn and fsyncs. */
  appendTurn(userId: string, sessionId: string, entry: HistoryEntry): Promise<void>;
  readCheckpoint(userId: string, sessionId: string): Promise<Checkpoint | null>;
  /** Atomic (temp file + rename): a crash leaves the previous or the new checkpoint, never a torn one. */
  writeCheckpoint(userId: string, sessionId: string, checkpoint: Checkpoint): Promise<void>;
  clearCheckpoint(userId: string, sessionId: string): Promise<void>;
  /** Runs `fn` holding the session's lock; turns on one session run one at a time, across processes too. */
  withSessionLock<T>(userId: string, sessionId: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

export interface MemorySnippet {
  text: string;
  source: string;
  score: number;
}

/** Full-text memory over a user's past turns and notes. */
export interface MemoryIndex {
  /** Builds the user's index once (past turns + data_dir/memory/<user>/*.md); idempotent. */
  ensureUser(userId: string): Promise<void>;
  /**
   * Best snippets for the query, within a token budget (≈ 4 characters a token). `excludeSource`
   * drops documents already in the context window (the current session's own turns).
   */
  search(userId: string, query: string, budgetTokens: number, excludeSource?: (source: string) => boolean): MemorySnippet[];
  /** Adds a finished turn to the index. */
  addTurn(userId: string, sessionId: string, entry: HistoryEntry): void;
  /** Drops the session's turns from the user's index (the session was deleted). */
  forgetSession?(userId: string, sessionId: string): void;
}

/**
 * Read-only access to past turns, for the memory index (FileSessionStore implements it next to
 * SessionStore). Reads take no lock and never repair: a damaged line is skipped, not rewritten.
 */
export interface HistoryReader {
  /** The session ids of a user that have a folder on disk, in no particular order. */
  listSessions(userId: string): Promise<string[]>;
  /** The valid turns of one session, oldest first. */
  readTurns(userId: string, sessionId: string): Promise<HistoryEntry[]>;
}

/**
 * What a front door records about a session besides its turns: ACP editors list sessions by
 * working directory and show a title. Sessions started elsewhere have none.
 */
export interface SessionMeta {
  version: 1;
  /** The working directory the session was opened in (absolute), or null when none was given. */
  cwd: string | null;
  /** A short title (the first prompt's opening words), once the session has one. */
  title: string | null;
  created_at: string;
  /** The last activity (a finished or cancelled prompt). */
  updated_at: string;
  /** The agent the session runs (ACP's model option); absent: the config's default agent. */
  agent?: string;
  /** A downloaded model (served on demand) the agent runs on instead of its own; absent: the agent's. */
  model?: string;
  /** False: the model's thinking is turned off (ACP's thinking option); absent: on. */
  thinking?: boolean;
}

export interface SessionCatalog {
  readMeta(userId: string, sessionId: string): Promise<SessionMeta | null>;
  /** Atomic (temp file + rename); creates the session's folder when needed. */
  writeMeta(userId: string, sessionId: string, meta: SessionMeta): Promise<void>;
  /** Every session of the user that has meta, in no particular order. */
  listMeta(userId: string): Promise<Array<{ sessionId: string; meta: SessionMeta }>>;
  /** True when the session has a folder on disk (turns, meta or a checkpoint). */
  exists(userId: string, sessionId: string): Promise<boolean>;
  /** Removes the session's folder (history, checkpoint, meta); false when there was none. */
  remove(userId: string, sessionId: string): Promise<boolean>;
}
