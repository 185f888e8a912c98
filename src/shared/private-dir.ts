import { chmod, lstat, mkdir, readdir, stat } from "node:fs/promises";
import path from "node:path";

/**
 * data_dir holds conversations, their KV state and the ids of every user and session: only its
 * owner may list or read it. Folders the runtime creates under it are 0700, files 0600 (set at
 * creation, umask permitting); folders found more open are tightened when the runtime uses them.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Group or other may read, write or enter it. */
export function isOpenToOthers(mode: number): boolean {
  return (mode & 0o077) !== 0;
}

/**
 * `mkdir -p dir` with 0700 for every folder it creates, then every existing folder from `root`
 * down to `dir` that others can enter is tightened to its owner's bits. Folders outside `root`
 * (a `--socket` elsewhere) are created private but never changed. Returns the first folder
 * created, as `mkdir` does (for the callers that fsync new folders' parents).
 */
export async function ensurePrivateDir(dir: string, root: string): Promise<string | undefined> {
  const created = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const top = path.resolve(root);
  let current = path.resolve(dir);
  for (;;) {
    const relative = path.relative(top, current);
    if (relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) break;
    await tighten(current, PRIVATE_DIR_MODE);
    if (relative === "") break;
    current = path.dirname(current);
  }
  return created;
}

/**
 * Every folder and file below `root` (and `root`) tightened: for a tree whose files another
 * library created with its own modes (a model download). Links are left alone.
 */
export async function tightenTree(root: string): Promise<void> {
  const info = await lstat(root).catch(() => null);
  if (info === null || info.isSymbolicLink()) return;
  if (info.isDirectory()) {
    await tighten(root, PRIVATE_DIR_MODE, info.mode);
    for (const entry of await readdir(root).catch(() => [])) await tightenTree(path.join(root, entry));
    return;
  }
  if (info.isFile()) await tighten(root, PRIVATE_FILE_MODE, info.mode);
}

/**
 * chmod to the owner's bits only when others have some. Not ours (EPERM), gone (ENOENT) or a
 * platform without POSIX modes: left as it is; access then fails or works as before.
 */
async function tighten(target: string, ceiling: number, known?: number): Promise<void> {
  if (process.platform === "win32") return;
  const mode = known ?? (await stat(target).catch(() => null))?.mode;
  if (mode === undefined || !isOpenToOthers(mode)) return;
  await chmod(target, mode & ceiling & 0o700).catch(() => undefined);
}
