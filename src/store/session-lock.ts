import { randomBytes } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";
import { open, readFile, stat, unlink, utimes } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import type { Logger } from "../logging/create-logger.js";
import { delay } from "../shared/abort.js";
import { retryTransient, unlinkRetrying } from "../shared/fs-retry.js";
import { isProcessAlive } from "../shared/process/is-process-alive.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { ensureDir, errorCode, isNotFound } from "./atomic-file.js";
import { toStorageError } from "./storage-error.js";

/**
 * Session lock semantics (turns on one session run one at a time):
 *
 * - In process: one FIFO promise chain per lock file. Callers run in arrival order; a caller that
 *   aborts while queued leaves the queue (RuntimeError "cancelled") without breaking the order.
 * - Across processes sharing a data_dir: the lock file is created with open(path, "wx") (atomic
 *   create-if-absent, also on NFSv3+) and holds `{pid, hostname, acquired_at, token}`. It exists
 *   exactly while a turn runs and is removed in `finally` (only if it still holds our token).
 * - The holder touches the file's mtime every `heartbeatMs`, so age means "holder stopped caring".
 * - A lock is stale, and is broken, when its pid is not alive on this host, or when its mtime is
 *   older than `staleMs` (a holder on another host, or a reused pid after a reboot, stops
 *   heartbeating). A lock file that cannot be parsed is stale after `unreadableStaleMs` (it may be
 *   a lock being written right now).
 * - Breaking goes through a second "wx" file (`<lock>.break`) and re-checks that the lock is the
 *   very file judged stale (same inode, mtime and bytes), so two waiters that both saw a stale lock
 *   cannot delete the fresh lock one of them has just taken.
 * - Waiting polls with a jittered exponential backoff (`pollMinMs`..`pollMaxMs`); the signal
 *   aborts the wait with RuntimeError "cancelled".
 */

export interface SessionLockOptions {
  logger?: Logger | undefined;
  /** Creates the lock's folder for a new session (default: ensureDir, with fsyncs). */
  createDir?: (dir: string) => Promise<void>;
  heartbeatMs?: number;
  staleMs?: number;
  unreadableStaleMs?: number;
  pollMinMs?: number;
  pollMaxMs?: number;
}

export interface LockOwner {
  pid: number;
  hostname: string;
  acquired_at: string;
  token: string;
}

interface Observed {
  raw: string;
  ino: number;
  mtimeMs: number;
  owner: LockOwner | null;
}

const BREAKER_STALE_MS = 10_000;

export function cancelledWaiting(): RuntimeError {
  return new RuntimeError("cancelled", "Cancelled while waiting for the session lock");
}

function parseOwner(raw: string): LockOwner | null {
  try {
    const value = JSON.parse(raw) as Partial<LockOwner> | null;
    if (value === null || typeof value !== "object") return null;
    const { pid, hostname: host, acquired_at, token } = value;
    if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0 || typeof host !== "string") return null;
    return { pid, hostname: host, acquired_at: String(acquired_at ?? ""), token: String(token ?? "") };
  } catch {
    return null;
  }
}

export class SessionLocks {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly host = hostname();
  private readonly heartbeatMs: number;
  private readonly staleMs: number;
  private readonly unreadableStaleMs: number;
  private readonly pollMinMs: number;
  private readonly pollMaxMs: number;
  private readonly logger: Logger | undefined;

  private readonly createDir: ((dir: string) => Promise<void>) | undefined;

  constructor(options: SessionLockOptions = {}) {
    this.logger = options.logger;
    this.createDir = options.createDir;
    this.heartbeatMs = options.heartbeatMs ?? 30_000;
    this.staleMs = options.staleMs ?? 10 * 60_000;
    this.unreadableStaleMs = options.unreadableStaleMs ?? 10_000;
    this.pollMinMs = options.pollMinMs ?? 10;
    this.pollMaxMs = options.pollMaxMs ?? 250;
  }

  /** Whether a caller in this process holds or waits for the lock at `lockFile`. */
  busy(lockFile: string): boolean {
    return this.tails.has(lockFile);
  }

  /** Runs `fn` holding the lock at `lockFile` (in-process queue first, then the file). */
  async run<T>(lockFile: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const prev = this.tails.get(lockFile) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    // The next caller waits for us, and (if we leave early) still for whoever is ahead of us.
    const tail = prev.then(() => mine);
    this.tails.set(lockFile, tail);
    try {
      await waitTurn(prev, signal);
      // A full or read-only disk shows first here (the lock is a turn's first write).
      const token = await this.acquire(lockFile, signal).catch((error: unknown) => {
        throw toStorageError(error, lockFile);
      });
      const heartbeat = setInterval(() => {
        const now = new Date();
        void utimes(lockFile, now, now).catch(() => undefined);
      }, this.heartbeatMs);
      heartbeat.unref();
      try {
        return await fn();
      } finally {
        clearInterval(heartbeat);
        await this.releaseFile(lockFile, token);
      }
    } finally {
      release();
      if (this.tails.get(lockFile) === tail) this.tails.delete(lockFile);
    }
  }

  private async acquire(file: string, signal: AbortSignal | undefined): Promise<string> {
    let wait = this.pollMinMs;
    for (;;) {
      if (signal?.aborted) throw cancelledWaiting();
      const token = randomBytes(8).toString("hex");
      if (await this.tryCreate(file, token)) return token;
      const observed = await observe(file);
      if (observed === null) continue; // released between our create and our look: try again now
      if (this.isStale(observed)) {
        await this.breakStale(file, observed);
        continue;
      }
      const jitter = 0.75 + Math.random() * 0.5;
      try {
        await delay(Math.round(wait * jitter), signal);
      } catch {
        throw cancelledWaiting();
      }
      wait = Math.min(this.pollMaxMs, wait * 1.6);
    }
  }

  /**
   * Creates the lock file with its owner in one synchronous open+write+close: a ~100-byte local
   * file costs microseconds that way, against three thread-pool round trips (each up to a
   * millisecond on a busy machine) on the path to every turn's first token.
   */
  private async tryCreate(file: string, token: string, attempt = 0): Promise<boolean> {
    let fd: number;
    try {
      // Retried briefly on EPERM/EBUSY/EACCES: a scanner holding a lock being released (Windows).
      fd = await retryTransient(() => Promise.resolve(openSync(file, "wx", 0o600)));
    } catch (error) {
      if (errorCode(error) === "EEXIST") return false;
      // A few tries: a failed first turn elsewhere may remove the empty folder we just made.
      if (!isNotFound(error) || attempt >= 3) throw error;
      // First turn of a new session: its folder does not exist yet.
      await (this.createDir ?? ensureDir)(path.dirname(file)).catch((cause: unknown) => {
        if (!isNotFound(cause) || attempt >= 2) throw cause;
      });
      return this.tryCreate(file, token, attempt + 1);
    }
    try {
      const owner: LockOwner = { pid: process.pid, hostname: this.host, acquired_at: new Date().toISOString(), token };
      writeSync(fd, JSON.stringify(owner));
    } catch (error) {
      // An empty lock would block others until judged stale: take it back now.
      closeSync(fd);
      await unlink(file).catch(() => undefined);
      throw error;
    }
    closeSync(fd);
    return true;
  }

  private isStale(observed: Observed): boolean {
    const age = Date.now() - observed.mtimeMs;
    const { owner } = observed;
    if (owner === null) return age > this.unreadableStaleMs;
    if (owner.hostname === this.host && !isProcessAlive(owner.pid)) return true;
    return age > this.staleMs;
  }

  private async breakStale(file: string, observed: Observed): Promise<void> {
    const breaker = `${file}.break`;
    let handle;
    try {
      handle = await open(breaker, "wx", 0o600);
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw error;
      // Someone else is breaking it; a breaker left by a crash is removed after a while.
      const info = await stat(breaker).catch(() => null);
      if (info && Date.now() - info.mtimeMs > BREAKER_STALE_MS) await unlink(breaker).catch(() => undefined);
      await delay(this.pollMinMs);
      return;
    }
    await handle.close();
    try {
      const now = await observe(file);
      if (now && now.ino === observed.ino && now.mtimeMs === observed.mtimeMs && now.raw === observed.raw) {
        await unlinkRetrying(file);
        this.logger?.warn({ lock: file, owner: observed.owner }, "broke a stale session lock");
      }
    } finally {
      await unlink(breaker).catch(() => undefined);
    }
  }

  /** Removes the lock only while it is still ours (it may have been broken as stale meanwhile). */
  private async releaseFile(file: string, token: string): Promise<void> {
    try {
      const owner = parseOwner(await readFile(file, "utf8"));
      if (owner?.token === token && owner.pid === process.pid) await unlinkRetrying(file);
      else this.logger?.warn({ lock: file }, "session lock was taken over while held; left in place");
    } catch (error) {
      if (!isNotFound(error)) this.logger?.warn({ lock: file, err: error }, "could not release the session lock");
    }
  }
}

async function observe(file: string): Promise<Observed | null> {
  try {
    const info = await stat(file);
    const raw = await readFile(file, "utf8");
    return { raw, ino: info.ino, mtimeMs: info.mtimeMs, owner: parseOwner(raw) };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** Waits for the previous holder in this process; an abort leaves the queue at once. */
function waitTurn(prev: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return prev;
  if (signal.aborted) return Promise.reject(cancelledWaiting());
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(cancelledWaiting());
    signal.addEventListener("abort", onAbort, { once: true });
    void prev.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
