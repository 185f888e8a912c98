import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, readdir, readFile, rename, stat, unlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Llama, LlamaContextSequence, Token } from "node-llama-cpp";
import type { Logger } from "pino";
import { z } from "zod";
import { renameRetrying, unlinkRetrying } from "../../shared/fs-retry.js";
import { ensurePrivateDir } from "../../shared/private-dir.js";
import { sameTokens } from "./sequence-pool.js";

/** What a saved state was computed with; a state is only ever loaded into the same. */
export interface ModelIdentity {
  /** The GGUF file, resolved. */
  path: string;
  size: number;
  mtime_ms: number;
  /** The llama.cpp build node-llama-cpp runs (its state format can change between releases). */
  llama_cpp: string;
}

/** A state file that matched its key and model, ready to be verified and loaded. */
export interface SavedState {
  key: string;
  tokens: Token[];
  statePath: string;
  stateBytes: number;
  sha256: string;
}

const FORMAT = 1;

/** The identity of the model file at `modelPath` as loaded by `llama`. */
export async function modelIdentity(modelPath: string, llama: Llama): Promise<ModelIdentity> {
  const resolved = path.resolve(modelPath);
  const info = await stat(resolved);
  return { path: resolved, size: info.size, mtime_ms: info.mtimeMs, llama_cpp: `${llama.llamaCppRelease.repo}@${llama.llamaCppRelease.release}` };
}

const metaSchema = z.object({
  format: z.literal(FORMAT),
  cache_key: z.string(),
  model: z.object({ path: z.string(), size: z.number(), mtime_ms: z.number(), llama_cpp: z.string() }),
  tokens: z.array(z.number().int().min(0)),
  state_bytes: z.number().int().min(0),
  state_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  saved_at: z.string(),
});

/** Temp files of a save that never finished (a crash) are removed after this long. */
const STALE_TEMP_MS = 10 * 60_000;

/**
 * Saved KV states of conversations (one per cache key) in one folder, with a disk budget.
 *
 * Each key has `<hash>.state` (llama.cpp's sequence state, written by node-llama-cpp's
 * `saveStateToFile`) and `<hash>.json` next to it: the cache key, the model's identity, the tokens
 * the state holds and the state file's size and SHA-256. llama.cpp trusts a state file it is given
 * (another model's file "may crash the process"), so nothing reaches `loadStateFromFile` unless
 * the meta parses, names this key and this model, and the state file's bytes hash to what was
 * saved: a corrupt, truncated, foreign or half-replaced file is ignored (debug log) and the turn
 * is evaluated cold. Least recently used (saved or restored) pairs are deleted beyond the budget.
 */
export class KvStateFiles {
  private swept = false;
  /** The saves' background part, chained in call order (see `save`). */
  private commits: Promise<void> = Promise.resolve();
  /** The last save in progress of each key. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly dir: string,
    private readonly budgetBytes: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Saves what `sequence` holds as `key`'s state (replacing an older one), then keeps the budget.
   * Only llama.cpp's write of the state needs the sequence; with `background` the call resolves
   * once that is done (true: written), so a conversation taking the sequence does not also wait
   * for the hash, the meta and the budget (milliseconds before its first token). Those finish in
   * the background, one save after another in call order; `find` waits for its key's, `settled`
   * for all, so a conversation coming back at once still finds its state.
   */
  async save(key: string, sequence: LlamaContextSequence, identity: ModelIdentity, options: { background?: boolean } = {}): Promise<boolean> {
    const tokens = [...sequence.contextTokens];
    if (tokens.length === 0) return false;
    const { state, meta } = this.pathsFor(key);
    const suffix = `.tmp-${randomBytes(4).toString("hex")}`;
    const started = Date.now();
    try {
      // <data_dir>/kv-cache/<model>: the state encodes conversations.
      await ensurePrivateDir(this.dir, path.dirname(this.dir));
      await sequence.saveStateToFile(state + suffix);
    } catch (error) {
      await unlink(state + suffix).catch(() => undefined);
      this.logger.warn({ key, err: (error as Error).message }, "kv state not saved");
      return false;
    }
    const committed = this.commits.then(() => this.commit({ key, tokens, identity, state, meta, suffix, started }));
    const done = committed.then(() => undefined);
    this.commits = done;
    this.pending.set(key, done);
    void done.then(() => {
      if (this.pending.get(key) === done) this.pending.delete(key);
    });
    return options.background === true ? true : committed;
  }

  /** Resolves when every save started so far has finished (its meta written and the budget kept, or given up). */
  settled(): Promise<void> {
    return this.commits;
  }

  /** The rest of a save once the state file is written: verify, describe, put in place, keep the budget. Never rejects. */
  private async commit(pending: { key: string; tokens: Token[]; identity: ModelIdentity; state: string; meta: string; suffix: string; started: number }): Promise<boolean> {
    const { key, tokens, identity, state, meta, suffix, started } = pending;
    try {
      // The state encodes the conversation: as private as the session files.
      await chmod(state + suffix, 0o600);
      const saved = await digest(state + suffix);
      if (saved.bytes > this.budgetBytes) {
        this.logger.debug({ key, bytes: saved.bytes, budget: this.budgetBytes }, "kv state larger than kv_cache_disk_bytes: not kept");
        await unlink(state + suffix).catch(() => undefined);
        return false;
      }
      const record: z.infer<typeof metaSchema> = {
        format: FORMAT,
        cache_key: key,
        model: identity,
        tokens,
        state_bytes: saved.bytes,
        state_sha256: saved.sha256,
        saved_at: new Date().toISOString(),
      };
      await writeFile(meta + suffix, JSON.stringify(record), { mode: 0o600 });
      // State first, then meta: a reader in between sees the old meta, whose hash the new state fails.
      // Retried briefly on EPERM/EBUSY/EACCES (a scanner reading the old file on Windows).
      await renameRetrying(state + suffix, state);
      await renameRetrying(meta + suffix, meta);
      this.logger.debug({ key, tokens: tokens.length, bytes: saved.bytes, ms: Date.now() - started }, "kv state saved");
    } catch (error) {
      await Promise.all([unlink(state + suffix), unlink(meta + suffix)].map((p) => p.catch(() => undefined)));
      this.logger.warn({ key, err: (error as Error).message }, "kv state not saved");
      return false;
    }
    await this.keepBudget().catch((error: unknown) => this.logger.warn({ err: (error as Error).message }, "kv_cache_disk_bytes not kept"));
    return true;
  }

  /** `key`'s saved state when its meta is readable and names this key and this model; null otherwise. */
  async find(key: string, identity: ModelIdentity): Promise<SavedState | null> {
    // This key's save may still be finishing (the conversation was evicted a moment ago); other
    // keys' saves are not waited for (the conversation that evicted one must not wait for it).
    await this.pending.get(key);
    const { state, meta } = this.pathsFor(key);
    let text: string;
    try {
      text = await readFile(meta, "utf8");
    } catch {
      return null;
    }
    let parsed: z.infer<typeof metaSchema>;
    try {
      parsed = metaSchema.parse(JSON.parse(text));
    } catch (error) {
      this.logger.debug({ key, file: meta, err: (error as Error).message }, "kv state ignored: unreadable meta");
      return null;
    }
    if (parsed.cache_key !== key) {
      this.logger.debug({ key, file: meta }, "kv state ignored: saved for another conversation");
      return null;
    }
    const mismatch = (Object.keys(identity) as Array<keyof ModelIdentity>).filter((field) => parsed.model[field] !== identity[field]);
    if (mismatch.length > 0) {
      this.logger.debug({ key, file: meta, fields: mismatch }, "kv state ignored: saved with another model file or llama.cpp build");
      return null;
    }
    return { key, tokens: parsed.tokens as Token[], statePath: state, stateBytes: parsed.state_bytes, sha256: parsed.state_sha256 };
  }

  /**
   * Loads a found state into `sequence` once its bytes are verified; true when the sequence now
   * holds exactly the saved tokens. On any failure the sequence is left empty and false returned.
   */
  async load(saved: SavedState, sequence: LlamaContextSequence): Promise<boolean> {
    const started = Date.now();
    let reason: string | null = null;
    try {
      const actual = await digest(saved.statePath);
      if (actual.bytes !== saved.stateBytes || actual.sha256 !== saved.sha256) reason = `state file does not match its meta (${actual.bytes} bytes, ${saved.stateBytes} expected, or another hash)`;
      else if (saved.tokens.length > sequence.contextSize) reason = `${saved.tokens.length} tokens do not fit the context (${sequence.contextSize})`;
      else {
        await sequence.clearHistory();
        await sequence.loadStateFromFile(saved.statePath, { acceptRisk: true });
        if (!sameTokens(sequence.contextTokens, saved.tokens)) reason = "the loaded state holds other tokens than its meta";
      }
    } catch (error) {
      reason = (error as Error).message;
    }
    if (reason !== null) {
      this.logger.debug({ key: saved.key, file: saved.statePath, reason }, "kv state ignored");
      await sequence.clearHistory().catch(() => undefined);
      return false;
    }
    const now = new Date();
    // Restoring counts as use for the least-recently-used order.
    await utimes(this.pathsFor(saved.key).meta, now, now).catch(() => undefined);
    this.logger.debug({ key: saved.key, tokens: saved.tokens.length, bytes: saved.stateBytes, ms: Date.now() - started }, "kv state restored");
    return true;
  }

  /** Deletes least recently used pairs (by the meta's mtime) until the folder fits the budget. */
  private async keepBudget(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return;
    }
    const entries = new Map<string, { bytes: number; usedAt: number; files: string[] }>();
    const now = Date.now();
    for (const name of names) {
      const file = path.join(this.dir, name);
      const info = await stat(file).catch(() => null);
      if (info === null || !info.isFile()) continue;
      if (name.includes(".tmp-")) {
        // Another process may be mid-save; only old leftovers are removed.
        if (!this.swept && now - info.mtimeMs > STALE_TEMP_MS) await unlink(file).catch(() => undefined);
        continue;
      }
      const stem = name.replace(/\.(state|json)$/, "");
      if (stem === name) continue;
      const entry = entries.get(stem) ?? { bytes: 0, usedAt: 0, files: [] };
      entry.bytes += info.size;
      entry.files.push(file);
      if (name.endsWith(".json")) entry.usedAt = info.mtimeMs;
      entries.set(stem, entry);
    }
    this.swept = true;
    let total = [...entries.values()].reduce((sum, entry) => sum + entry.bytes, 0);
    const oldestFirst = [...entries.entries()].sort(([, a], [, b]) => a.usedAt - b.usedAt);
    for (const [stem, entry] of oldestFirst) {
      if (total <= this.budgetBytes) break;
      await Promise.all(entry.files.map((file) => unlinkRetrying(file).catch(() => undefined)));
      total -= entry.bytes;
      this.logger.debug({ file: stem, bytes: entry.bytes }, "kv state evicted from disk (kv_cache_disk_bytes)");
    }
  }

  /** Deletes the key's saved state (its conversation was deleted), after any save of it still finishing. */
  async remove(key: string): Promise<void> {
    await this.pending.get(key)?.catch(() => undefined);
    await removeStateFiles(this.dir, key);
  }

  private pathsFor(key: string): { state: string; meta: string } {
    return statePaths(this.dir, key);
  }
}

function statePaths(dir: string, key: string): { state: string; meta: string } {
  const stem = createHash("sha256").update(key).digest("hex").slice(0, 40);
  return { state: path.join(dir, `${stem}.state`), meta: path.join(dir, `${stem}.json`) };
}

async function removeStateFiles(dir: string, key: string): Promise<void> {
  const { state, meta } = statePaths(dir, key);
  await Promise.all([unlinkRetrying(state), unlinkRetrying(meta)].map((removal) => removal.catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  })));
}

/**
 * Deletes a conversation's saved KV states under `<data_dir>/kv-cache`, in every model's folder
 * (a session may have run on several models, loaded in this process or not).
 */
export async function removeSavedStates(kvCacheRoot: string, key: string): Promise<void> {
  const folders = await readdir(kvCacheRoot, { withFileTypes: true }).catch(() => []);
  await Promise.all(folders.filter((entry) => entry.isDirectory()).map((entry) => removeStateFiles(path.join(kvCacheRoot, entry.name), key)));
}

/**
 * Moves the folder an earlier version named `legacy` to `dir` when only the old one exists under
 * exactly that name (on a case-insensitive disk `Qwen` would otherwise find `qwen`'s folder).
 * States are a cache: whatever fails is logged and the turn starts cold.
 */
export async function adoptLegacyDir(legacy: string, dir: string, logger: Logger): Promise<void> {
  try {
    const names = await readdir(path.dirname(legacy));
    if (!names.includes(path.basename(legacy)) || names.includes(path.basename(dir))) return;
    await rename(legacy, dir);
    logger.info({ from: legacy, to: dir }, "kv states of an earlier version moved to the folder's new name");
  } catch (error) {
    logger.debug({ from: legacy, to: dir, err: (error as Error).message }, "kv states of an earlier version not moved");
  }
}

async function digest(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    const buffer = chunk as Buffer;
    bytes += buffer.length;
    hash.update(buffer);
  }
  return { bytes, sha256: hash.digest("hex") };
}
