import { randomBytes } from "node:crypto";
import { access, mkdir, open, rename } from "node:fs/promises";
import path from "node:path";
import { openRetrying, retryTransient, unlinkRetrying } from "../shared/fs-retry.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../shared/private-dir.js";

/**
 * Crash-safe file primitives. The rule they implement: a reader sees either the old bytes or the
 * new bytes of a file, never a mix, whatever moment the process (or the machine) dies at.
 */

export function errorCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code: unknown = error.code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

export function isNotFound(error: unknown): boolean {
  return errorCode(error) === "ENOENT";
}

/**
 * fsyncs a folder so that a rename, create or unlink inside it survives a power loss (POSIX only
 * promises the file's data after fsync(file), not its name). Platforms that cannot open a folder
 * (Windows: EISDIR/EPERM) make renames durable on their own, so the failure is ignored there.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, "r");
  } catch (error) {
    if (["EISDIR", "EPERM", "EACCES"].includes(errorCode(error) ?? "")) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!["EINVAL", "EBADF", "EPERM", "ENOTSUP"].includes(errorCode(error) ?? "")) throw error;
  } finally {
    await handle.close();
  }
}

/**
 * `mkdir -p` (new folders private: everything here lives under data_dir) that also fsyncs the
 * parents of the folders it created, so new folders survive a crash.
 */
export async function ensureDir(dir: string): Promise<void> {
  const firstCreated = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (firstCreated === undefined) return;
  await fsyncCreatedDirs(dir, firstCreated);
}

/**
 * Makes folders created by `mkdir -p dir` (the first of them was `firstCreated`) survive a crash:
 * each is a new entry in its parent, so the parents are fsynced from the deepest up.
 */
export async function fsyncCreatedDirs(dir: string, firstCreated: string): Promise<void> {
  let current = path.dirname(dir);
  const stop = path.dirname(firstCreated);
  for (;;) {
    await fsyncDir(current);
    if (current === stop || path.dirname(current) === current) break;
    current = path.dirname(current);
  }
}

export interface AtomicWriteOptions {
  /** Test seam: runs after the temp file is durable and before the rename (simulate a crash there). */
  beforeRename?: (tempPath: string) => Promise<void>;
  /** Test seam: the rename (a fake that fails as antivirus does on Windows). */
  rename?: (from: string, to: string) => Promise<void>;
}

/** The temp file sits in the target's folder (rename is only atomic within one file system). */
export function tempPathFor(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
}

/** True for names made by tempPathFor for `baseName`: leftovers of a crash, safe to delete. */
export function isTempFor(baseName: string, name: string): boolean {
  return name.startsWith(`.${baseName}.`) && name.endsWith(".tmp");
}

/**
 * Replaces `target` atomically: write a temp file in the same folder, fsync it, rename it over the
 * target, fsync the folder. A crash before the rename leaves the old file (plus a stray temp
 * file); after it, the new one. The temp file is removed when any step fails. The open and the
 * rename are retried briefly on EPERM/EBUSY/EACCES (a scanner holding the file on Windows).
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const temp = tempPathFor(target);
  let renamed = false;
  try {
    const handle = await openRetrying(temp, "wx", PRIVATE_FILE_MODE);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.beforeRename) await options.beforeRename(temp);
    const renameFile = options.rename ?? rename;
    await retryTransient(() => renameFile(temp, target));
    renamed = true;
    await fsyncDir(path.dirname(target));
  } finally {
    if (!renamed) await unlinkRetrying(temp).catch(() => undefined);
  }
}

/**
 * Writes a new file that must not replace anything (forensic copies): `name`, or `name-2`, `name-3`...
 * when taken. Returns the path written.
 */
export async function writeNewFile(target: string, data: string | Uint8Array): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    const candidate = attempt === 1 ? target : `${target}-${attempt}`;
    let handle;
    try {
      handle = await openRetrying(candidate, "wx", PRIVATE_FILE_MODE);
    } catch (error) {
      if (errorCode(error) === "EEXIST" && attempt < 100) continue;
      throw error;
    }
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsyncDir(path.dirname(candidate));
    return candidate;
  }
}

/**
 * `base`, or `base-2`, `base-3`... whichever is free (for forensic copies that must not replace an
 * earlier one). Check-then-use: callers hold the session lock, so nothing else races for the name.
 */
export async function freeName(base: string): Promise<string> {
  for (let attempt = 1; attempt < 100; attempt += 1) {
    const candidate = attempt === 1 ? base : `${base}-${attempt}`;
    try {
      await access(candidate);
    } catch (error) {
      if (isNotFound(error)) return candidate;
      throw error;
    }
  }
  return `${base}-${randomBytes(4).toString("hex")}`;
}
