import { RuntimeError } from "../shared/runtime-error.js";
import { errorCode } from "./atomic-file.js";

/** The disk (or the user's quota) has no room left. */
const FULL = new Set(["ENOSPC", "EDQUOT"]);

/** The file system refuses the write for a reason a user can fix outside local-ai. */
const REFUSED: Record<string, string> = {
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EIO: "an I/O error (a failing disk or a lost network mount)",
  EFBIG: "the file is larger than this process may write (ulimit -f)",
};

/**
 * A failed write under data_dir as the error a user can act on: `storage_full` (free some space or
 * move data_dir) or `storage_error` (make it writable), naming the file. Anything else, and an error
 * that already is a RuntimeError (a cancelled lock wait), is returned unchanged. Callers make sure
 * a failed write left the session's files whole (appends roll back, replacements are atomic).
 */
export function toStorageError(error: unknown, file: string): unknown {
  if (error instanceof RuntimeError) return error;
  const errno = errorCode(error);
  if (errno === undefined) return error;
  const details = { path: file, errno, config_key: "app.data_dir" };
  if (FULL.has(errno)) {
    return new RuntimeError(
      "storage_full",
      `Could not write ${file}: no space left on its disk (${errno}). Free some space there, or set app.data_dir to a folder on a disk with room, then send the request again; the session's saved turns are unchanged`,
      { details, cause: error },
    );
  }
  const reason = REFUSED[errno];
  if (reason === undefined) return error;
  return new RuntimeError(
    "storage_error",
    `Could not write ${file}: ${reason} (${errno}). Make app.data_dir writable by this user (or point it at a folder that is), then send the request again; the session's saved turns are unchanged`,
    { details, cause: error },
  );
}

/** Runs a store write, turning a disk failure into storage_full / storage_error about `file`. */
export async function storing<T>(file: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    throw toStorageError(error, file);
  }
}
