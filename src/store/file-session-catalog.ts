import { rm, stat } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../logging/create-logger.js";
import { ensureDir, isNotFound, writeFileAtomic } from "./atomic-file.js";
import { readJsonRecord } from "./json-record-file.js";
import { isSessionMeta } from "./record-schemas.js";
import { storing } from "./storage-error.js";
import { sessionPaths } from "./session-paths.js";
import type { HistoryReader, SessionCatalog, SessionMeta } from "./store-types.js";

/**
 * Session meta on disk: `<data_dir>/sessions/<user>/<session>/session.json` next to the history,
 * so a session folder stays the one thing to copy or delete. A file that does not parse is
 * ignored (logged), never fatal: the session itself is still there.
 */
export class FileSessionCatalog implements SessionCatalog {
  readonly dataDir: string;

  constructor(
    dataDir: string,
    /** `legacyNamesMigrated` (FileSessionStore): meta is read and written only once old folders have their new names. */
    private readonly sessions: Pick<HistoryReader, "listSessions"> & { legacyNamesMigrated?: () => Promise<void> },
    private readonly logger?: Logger,
  ) {
    this.dataDir = path.resolve(dataDir);
  }

  async readMeta(userId: string, sessionId: string): Promise<SessionMeta | null> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    await this.sessions.legacyNamesMigrated?.();
    const read = await readJsonRecord(paths.meta, isSessionMeta);
    if (read.status === "ok") return read.value;
    if (read.status === "unreadable") this.logger?.warn({ user_id: userId, session_id: sessionId }, "session meta (session.json) is unreadable; ignored");
    return null;
  }

  async writeMeta(userId: string, sessionId: string, meta: SessionMeta): Promise<void> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    await this.sessions.legacyNamesMigrated?.();
    await storing(paths.meta, async () => {
      await ensureDir(paths.dir);
      await writeFileAtomic(paths.meta, JSON.stringify(meta));
    });
  }

  async listMeta(userId: string): Promise<Array<{ sessionId: string; meta: SessionMeta }>> {
    const ids = await this.sessions.listSessions(userId);
    const found = await Promise.all(ids.map(async (sessionId) => ({ sessionId, meta: await this.readMeta(userId, sessionId).catch(() => null) })));
    return found.filter((entry): entry is { sessionId: string; meta: SessionMeta } => entry.meta !== null);
  }

  async remove(userId: string, sessionId: string): Promise<boolean> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    if (!(await this.exists(userId, sessionId))) return false;
    // The folder holds everything of the session (history, checkpoint, meta, its lock while held).
    await storing(paths.dir, () => rm(paths.dir, { recursive: true, force: true, maxRetries: 3 }));
    return true;
  }

  async exists(userId: string, sessionId: string): Promise<boolean> {
    const paths = sessionPaths(this.dataDir, userId, sessionId);
    await this.sessions.legacyNamesMigrated?.();
    try {
      return (await stat(paths.dir)).isDirectory();
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }
}
