// Windows: antivirus scanners, the search indexer and backup tools open files briefly without
// FILE_SHARE_DELETE, and a rename, unlink or open that meets such a handle fails with EPERM, EBUSY
// or EACCES for a few milliseconds. graceful-fs retries those; so do we, briefly (a real
// permission problem still fails, a few hundred milliseconds later, with the same error).
import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import type { Mode, OpenMode, PathLike } from "node:fs";
import { delay } from "./abort.js";

/** The codes a briefly held handle causes on Windows (and that a real refusal also gives). */
export const TRANSIENT_FS_CODES: ReadonlySet<string> = new Set(["EPERM", "EBUSY", "EACCES"]);

/** The waits between attempts: 6 attempts over ~310 ms. */
export const FS_RETRY_DELAYS_MS: readonly number[] = [10, 20, 40, 80, 160];

export interface FsRetryOptions {
  delaysMs?: readonly number[];
  /** Test seam: how to wait. */
  sleep?: (ms: number) => Promise<void>;
}

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;

/** Runs `op`, again after each delay while it fails with a transient code; the last error otherwise. */
export async function retryTransient<T>(op: () => Promise<T>, options: FsRetryOptions = {}): Promise<T> {
  const delays = options.delaysMs ?? FS_RETRY_DELAYS_MS;
  const sleep = options.sleep ?? ((ms: number) => delay(ms));
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (error) {
      const wait = delays[attempt];
      if (wait === undefined || !TRANSIENT_FS_CODES.has(codeOf(error) ?? "")) throw error;
      await sleep(wait);
    }
  }
}

export function renameRetrying(from: PathLike, to: PathLike): Promise<void> {
  return retryTransient(() => rename(from, to));
}

export function unlinkRetrying(file: PathLike): Promise<void> {
  return retryTransient(() => unlink(file));
}

export function openRetrying(file: PathLike, flags: OpenMode, mode?: Mode): Promise<FileHandle> {
  return retryTransient(() => open(file, flags, mode));
}
