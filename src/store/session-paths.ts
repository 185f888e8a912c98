import path from "node:path";
import { RuntimeError } from "../shared/runtime-error.js";
import { assertSafeId } from "../shared/safe-id.js";
import { storeName } from "../shared/store-name.js";

/**
 * Every on-disk path of the store, built in one place so that no other file joins a user-supplied
 * id into a path. Layout under data_dir:
 *
 *   sessions/<user>/<session>/history.jsonl      one HistoryEntry per line, append-only
 *   sessions/<user>/<session>/checkpoint.json    L2 checkpoint, replaced atomically
 *   sessions/<user>/<session>/session.lock       cross-process turn lock (exists while held)
 *   sessions/<user>/<session>/session.json       SessionMeta (ACP sessions: cwd, title), replaced atomically
 *   memory/<user>/*.md                           the user's notes, indexed by memory
 *
 * `<user>` and `<session>` are storeName of the exact ids (unique on case-insensitive disks too;
 * `Alice` -> `+alice`); earlier versions used the raw id (legacy-store-names.ts moves those).
 * Ids are checked with assertSafeId before any join (the SessionRunner checks them too: defense in
 * depth), and the joined path is checked to be inside data_dir in case the id rule ever loosens.
 */

export const HISTORY_FILE = "history.jsonl";
export const CHECKPOINT_FILE = "checkpoint.json";
export const LOCK_FILE = "session.lock";
export const META_FILE = "session.json";

export interface SessionPaths {
  dir: string;
  history: string;
  checkpoint: string;
  lock: string;
  meta: string;
}

/** Throws invalid_request unless `candidate` is `root` itself or below it. */
export function assertInside(root: string, candidate: string): string {
  const relative = path.relative(root, candidate);
  if (relative.startsWith("..") || path.isAbsolute(relative)) {
    throw new RuntimeError("invalid_request", "session path escapes data_dir", { details: { param: "session_id" } });
  }
  return candidate;
}

/** The folder holding all sessions of one user. */
export function userSessionsDir(dataDir: string, userId: string): string {
  const root = path.resolve(dataDir);
  assertSafeId("user_id", userId);
  return assertInside(root, path.join(root, "sessions", storeName(userId)));
}

export function sessionPaths(dataDir: string, userId: string, sessionId: string): SessionPaths {
  const root = path.resolve(dataDir);
  assertSafeId("user_id", userId);
  assertSafeId("session_id", sessionId);
  const dir = assertInside(root, path.join(root, "sessions", storeName(userId), storeName(sessionId)));
  return {
    dir,
    history: path.join(dir, HISTORY_FILE),
    checkpoint: path.join(dir, CHECKPOINT_FILE),
    lock: path.join(dir, LOCK_FILE),
    meta: path.join(dir, META_FILE),
  };
}

/** `data_dir/memory/<user>`: markdown notes the memory index reads. */
export function userNotesDir(dataDir: string, userId: string): string {
  const root = path.resolve(dataDir);
  assertSafeId("user_id", userId);
  return assertInside(root, path.join(root, "memory", storeName(userId)));
}

/** A file-name-safe timestamp (no `:`), for `.corrupt-<timestamp>` copies. */
export function fileTimestamp(date: Date = new Date()): string {
  return date.toISOString().replace(/[:.]/g, "-");
}
