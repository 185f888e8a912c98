import { readdir, rename, rmdir, unlink } from "node:fs/promises";
import { ensurePrivateDir } from "../shared/private-dir.js";
import path from "node:path";
import type { Logger } from "../logging/create-logger.js";
import { idFromStoreName } from "../shared/store-name.js";
import { ensureDir, freeName, fsyncCreatedDirs, fsyncDir, isNotFound, isTempFor, writeFileAtomic } from "./atomic-file.js";
import { appendHistoryEntry, lastEntryTraceId, loadHistoryFile, readHistoryEntries } from "./history-file.js";
import { readJsonRecord } from "./json-record-file.js";
import { migrateLegacyNames, refuseToCreate } from "./legacy-store-names.js";
import { isCheckpoint } from "./record-schemas.js";
import { storing } from "./storage-error.js";
import { SessionLocks, type SessionLockOptions } from "./session-lock.js";
import { CHECKPOINT_FILE, fileTimestamp, LOCK_FILE, sessionPaths, userSessionsDir } from "./session-paths.js";
import type { Checkpoint, HistoryEntry, HistoryReader, LoadedHistory, SessionStore } from "./store-types.js";

export interface FileSessionStoreDeps {
  logger?: Logger;
  /** Lock timing (tests shorten the stale bounds). */
  lock?: Omit<SessionLockOptions, "logger">;
  /** Clock for `.corrupt-<timestamp>` names. */
  now?: () => Date;
}

/**
 * Sessions on disk: `<data_dir>/sessions/<user>/<session>/{history.jsonl, checkpoint.json,
 * session.lock}` (see session-paths.ts). History is append-only and fsynced per turn, the
 * checkpoint is replaced atomically after each step, so a crash loses at most the step in flight.
 * Damage is repaired and reported as a warning, never thrown. Callers run a turn's reads and
 * writes inside withSessionLock (loading may rewrite a damaged history).
 */
export class FileSessionStore implements SessionStore, HistoryReader {
  readonly dataDir: string;
  private readonly logger: Logger | undefined;
  private readonly locks: SessionLocks;
  private readonly now: () => Date;
  /** Session folders the lock created whose parents are not fsynced yet: folder -> first created. */
  private readonly unsynced = new Map<string, string>();
  /** The locks that guard moving folders of earlier versions (they never create a folder). */
  private readonly legacyLocks: SessionLocks;
  private namesMigrated: Promise<void> | undefined;

  constructor(dataDir: string, deps: FileSessionStoreDeps = {}) {
    this.dataDir = path.resolve(dataDir);
    this.logger = deps.logger;
    this.locks = new SessionLocks({ ...deps.lock, logger: deps.logger, createDir: (dir) => this.createSessionDir(dir) });
    this.legacyLocks = new SessionLocks({ ...deps.lock, logger: deps.logger, createDir: refuseToCreate });
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Resolves once folders named by an earlier version (raw ids) have their new names; the first
   * call starts the move, every call returns the same promise, which never rejects.
   */
  legacyNamesMigrated(): Promise<void> {
    this.namesMigrated ??= migrateLegacyNames(this.dataDir, this.legacyLocks, this.logger);
    return this.namesMigrated;
  }

  async loadHistory(userId: string, sessionId: string): Promise<LoadedHistory> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    await this.legacyNamesMigrated();
    const { entries, warnings } = await loadHistoryFile(paths.history, this.now);
    for (const warning of warnings) this.logger?.warn({ user_id: userId, session_id: sessionId }, warning);
    return { messages: entries.flatMap((entry) => entry.messages), warnings };
  }

  async appendTurn(userId: string, sessionId: string, entry: HistoryEntry): Promise<void> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    await this.legacyNamesMigrated();
    await storing(paths.history, async () => {
      await this.durableDir(paths.dir);
      await appendHistoryEntry(paths.history, entry);
    });
  }

  async readCheckpoint(userId: string, sessionId: string): Promise<Checkpoint | null> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    await this.legacyNamesMigrated();
    const read = await readJsonRecord(paths.checkpoint, isCheckpoint);
    if (read.status === "missing") return null;
    if (read.status === "ok") {
      // A kill between appending the finished turn and removing its checkpoint leaves both: the
      // turn is done, so there is nothing to resume (resuming would run it and append it twice).
      if ((await lastEntryTraceId(paths.history)) !== read.value.trace_id) return read.value;
      this.logger?.debug({ user_id: userId, session_id: sessionId, trace_id: read.value.trace_id }, "checkpoint of a turn already in the history; ignored");
      return null;
    }
    // Atomic writes cannot tear it, so this is outside damage or a foreign version: set it aside
    // (the turn then starts afresh) rather than resume from state we cannot trust.
    const aside = await freeName(`${paths.checkpoint}.corrupt-${fileTimestamp(this.now())}`);
    await rename(paths.checkpoint, aside).catch(() => undefined);
    this.logger?.warn({ user_id: userId, session_id: sessionId, kept: path.basename(aside) }, "session checkpoint was unreadable; ignored it");
    return null;
  }

  async writeCheckpoint(userId: string, sessionId: string, checkpoint: Checkpoint): Promise<void> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    await this.legacyNamesMigrated();
    await storing(paths.checkpoint, async () => {
      await this.durableDir(paths.dir);
      await writeFileAtomic(paths.checkpoint, JSON.stringify(checkpoint));
    });
  }

  /** Removes the checkpoint and any temp file a crash mid-write left behind. */
  async clearCheckpoint(userId: string, sessionId: string): Promise<void> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    await this.legacyNamesMigrated();
    let names: string[];
    try {
      names = await readdir(paths.dir);
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    const doomed = names.filter((name) => name === CHECKPOINT_FILE || isTempFor(CHECKPOINT_FILE, name));
    if (doomed.length === 0) return;
    await storing(paths.checkpoint, async () => {
      for (const name of doomed) {
        await unlink(path.join(paths.dir, name)).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
      }
      await fsyncDir(paths.dir);
    });
  }

  /**
   * The lock of a new session only needs its folder to exist, not to survive a power loss: the
   * parents' fsyncs (milliseconds, on the path to the first token) are paid by the first write
   * that must be durable (the turn's first checkpoint, written off that path, or the history).
   */
  private async createSessionDir(dir: string): Promise<void> {
    // Private (0700) like everything under data_dir; data_dir and sessions/ tightened if found open.
    const first = await ensurePrivateDir(dir, this.dataDir);
    if (first !== undefined) this.unsynced.set(dir, first);
  }

  private async durableDir(dir: string): Promise<void> {
    const first = this.unsynced.get(dir);
    if (first === undefined) {
      await ensureDir(dir);
      return;
    }
    await fsyncCreatedDirs(dir, first);
    this.unsynced.delete(dir);
  }

  async withSessionLock<T>(userId: string, sessionId: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    // No await before run(): the in-process queue must be joined in call order (every caller
    // chains on the one legacyNamesMigrated promise, whose callbacks run in that order).
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    return this.legacyNamesMigrated().then(() => this.locks.run(paths.lock, fn, signal)).catch(async (error: unknown) => {
      await this.removeIfEmpty(paths.dir, userSessionsDir(this.dataDir, userId));
      throw error;
    });
  }

  /**
   * A request that failed before its turn wrote anything (unknown agent, a model that cannot load)
   * leaves no session behind: the folders the lock created are removed while empty. rmdir refuses a
   * folder with anything in it, so a session with history or a checkpoint is never touched.
   */
  private async removeIfEmpty(sessionDir: string, userDir: string): Promise<void> {
    if (this.locks.busy(path.join(sessionDir, LOCK_FILE))) return;
    for (const dir of [sessionDir, userDir]) {
      try {
        await rmdir(dir);
        this.unsynced.delete(dir);
      } catch {
        return;
      }
    }
  }

  async listSessions(userId: string): Promise<string[]> {
    const dir = userSessionsDir(this.dataDir, userId);
    await this.legacyNamesMigrated();
    try {
      const entries = await readdir(dir, { withFileTypes: true });
      // Folder names are storeNames: the exact ids come back from them.
      return entries.flatMap((entry) => {
        const id = entry.isDirectory() ? idFromStoreName(entry.name) : null;
        return id === null ? [] : [id];
      });
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
  }

  async readTurns(userId: string, sessionId: string): Promise<HistoryEntry[]> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    await this.legacyNamesMigrated();
    return readHistoryEntries(paths.history);
  }
}
