import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { RuntimeError } from "../shared/runtime-error.js";

/** Which argument a path came in (named in the refusal the model reads). */
export type PathParam = "path" | "cwd";

/** Links followed while resolving one path; beyond it the path is refused as a loop (the kernel's ELOOP bound). */
export const MAX_LINK_HOPS = 40;

/**
 * A path the model gave (relative to the session's cwd, or absolute) as the absolute path the
 * editor is asked about, refused unless it stays inside `cwd`. Lexical: `..` and absolute paths
 * elsewhere are caught here; symlinks by `assertRealInside`.
 */
export function resolveInWorkspace(cwd: string, given: string, param: PathParam = "path"): string {
  if (given.includes("\0")) throw outside(given, cwd, param);
  const absolute = path.resolve(cwd, given);
  if (!isInside(cwd, absolute)) throw outside(given, cwd, param);
  return absolute;
}

/**
 * The same rule after symlinks: `absolute` resolved component by component as the editor's
 * open() would (every link followed, its target checked even when the target does not exist yet,
 * so a dangling `dl -> /elsewhere/new.txt` or `dldir -> /elsewhere/dir` is caught) must land
 * inside the real cwd, and an existing regular file there must have one link only (a hard link
 * can reach a file anywhere on the same file system). Where the files are not on this machine (a
 * remote editor) there is nothing to resolve and the lexical check stands.
 */
export async function assertRealInside(cwd: string, absolute: string, given: string, param: PathParam = "path"): Promise<void> {
  const realCwd = await realpath(cwd).catch(() => null);
  if (realCwd === null) return;
  const resolved = await resolvePhysical(absolute);
  if (resolved === null) throw new RuntimeError("invalid_params", `${param} ${quoted(given)} cannot be resolved: more than ${MAX_LINK_HOPS} symbolic links (a loop)`, { details: { param } });
  if (!isInside(realCwd, resolved)) throw outside(given, cwd, param);
  // A hard link is a second name for the same file, with nothing on it saying where the other
  // names are: a workspace file linked to one outside would let the editor read or overwrite it.
  const info = await lstat(resolved).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return null;
    throw error;
  });
  if (info?.isFile() === true && info.nlink > 1) {
    throw new RuntimeError("invalid_params", `${param} ${quoted(given)} is a file with ${info.nlink} hard links (more than one link): its other names may lie outside the session's working directory ${cwd}, so it is not read or written`, { details: { param, links: info.nlink } });
  }
}

/**
 * Where an absolute path leads: links followed (relative targets from the link's folder,
 * absolute ones from the root), `..` applied after a link as the kernel does, and the part
 * below the first missing component taken as written (nothing there can be a link). Null after
 * MAX_LINK_HOPS links. Errors other than a missing component (EACCES) propagate: a path that
 * cannot be checked is refused by the caller.
 */
async function resolvePhysical(absolute: string): Promise<string | null> {
  const { root } = path.parse(absolute);
  let current = root;
  const pending = parts(absolute.slice(root.length));
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === ".") continue;
    if (part === "..") {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    const info = await lstat(next).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" || error.code === "ENOTDIR") return null;
      throw error;
    });
    if (info === null) return path.resolve(next, ...pending);
    if (!info.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++hops > MAX_LINK_HOPS) return null;
    const target = await readlink(next);
    if (path.isAbsolute(target)) current = path.parse(target).root;
    pending.unshift(...parts(target.slice(path.isAbsolute(target) ? path.parse(target).root.length : 0)));
  }
  return current;
}

function parts(relative: string): string[] {
  return relative.split(path.sep === "\\" ? /[\\/]+/ : /\/+/).filter((part) => part !== "");
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function quoted(given: string): string {
  return JSON.stringify(given.slice(0, 200));
}

function outside(given: string, cwd: string, param: PathParam): RuntimeError {
  return new RuntimeError("invalid_params", `${param} ${quoted(given)} is outside the session's working directory ${cwd}`, { details: { param } });
}
