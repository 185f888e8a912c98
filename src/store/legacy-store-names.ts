import { lstat, readdir, rename, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../logging/create-logger.js";
import { idFromFolderName, storeName } from "../shared/store-name.js";
import { ensureDir, fsyncDir, isNotFound } from "./atomic-file.js";
import type { SessionLocks } from "./session-lock.js";
import { LOCK_FILE } from "./session-paths.js";

/**
 * Earlier versions named folders by the raw id (`sessions/Alice/S1`, `memory/Alice`); this moves
 * every such folder to its storeName (`sessions/+alice/+s1`, `memory/+alice`) once, on the store's
 * first use, before any session is read or written. Folders already named by storeName (every
 * all-lower-case plain id) are left alone.
 *
 * A session folder is renamed holding its old session lock (so a turn an earlier version runs in
 * it finishes first, and two processes never both move it); the rename is atomic, so a crash
 * leaves it at the old name or the new one and the next start finishes the job. `locks` must not
 * create a missing folder: a folder another process has moved meanwhile is then simply gone.
 * When both names exist, the new one is used and the old one left in place (logged; doctor lists
 * it). Nothing here throws: a folder that cannot be moved is logged and stays where it is.
 */
export async function migrateLegacyNames(dataDir: string, locks: SessionLocks, logger?: Logger): Promise<void> {
  const sessions = path.join(dataDir, "sessions");
  for (const userFolder of await folders(sessions, logger)) {
    const userId = idFromFolderName(userFolder);
    if (userId === null) continue;
    const userName = storeName(userId);
    for (const sessionFolder of await folders(path.join(sessions, userFolder), logger)) {
      const sessionId = idFromFolderName(sessionFolder);
      if (sessionId === null || (userFolder === userName && sessionFolder === storeName(sessionId))) continue;
      await moveSession(path.join(sessions, userFolder, sessionFolder), path.join(sessions, userName, storeName(sessionId)), locks, logger);
    }
    // Left only when something in it could not be moved (rmdir refuses a folder that is not empty).
    if (userFolder !== userName) await rmdir(path.join(sessions, userFolder)).catch(() => undefined);
  }
  const memory = path.join(dataDir, "memory");
  for (const folder of await folders(memory, logger)) {
    const userId = idFromFolderName(folder);
    if (userId === null || folder === storeName(userId)) continue;
    await moveFolder(path.join(memory, folder), path.join(memory, storeName(userId)), logger);
  }
}

async function moveSession(from: string, to: string, locks: SessionLocks, logger: Logger | undefined): Promise<void> {
  try {
    await locks.run(path.join(from, LOCK_FILE), async () => {
      if (!(await moveFolder(from, to, logger))) return;
      // The lock we hold moved with its folder.
      await unlink(path.join(to, LOCK_FILE)).catch(() => undefined);
    });
  } catch (error) {
    if (!(await isDir(from))) return; // moved by another process while we waited for its lock
    logger?.warn({ from, to, err: error }, "store names: could not move a session folder of an earlier version; it stays where it is");
  }
}

/** Renames `from` to `to` unless `to` exists; true when it did. */
async function moveFolder(from: string, to: string, logger: Logger | undefined): Promise<boolean> {
  if (await isDir(to)) {
    logger?.warn({ from, to }, "store names: both the old and the new name of a folder exist; the new one is used, the old one is left in place");
    return false;
  }
  try {
    await ensureDir(path.dirname(to));
    await rename(from, to);
  } catch (error) {
    logger?.warn({ from, to, err: error }, "store names: could not rename a folder of an earlier version; it stays where it is");
    return false;
  }
  logger?.info({ from, to }, "store names: renamed a folder of an earlier version");
  // Durable rename; the old parent may be gone already (another process removed it once empty).
  await fsyncDir(path.dirname(to)).catch(() => undefined);
  if (path.dirname(from) !== path.dirname(to)) await fsyncDir(path.dirname(from)).catch(() => undefined);
  return true;
}

async function folders(dir: string, logger: Logger | undefined): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch (error) {
    if (!isNotFound(error)) logger?.warn({ dir, err: error }, "store names: could not list a folder; names in it are not checked");
    return [];
  }
}

async function isDir(dir: string): Promise<boolean> {
  try {
    return (await lstat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/** Creates nothing: the lock of a folder to move must find the folder still there. */
export function refuseToCreate(dir: string): Promise<void> {
  return Promise.reject(new Error(`${dir} is gone (moved by another process)`));
}
