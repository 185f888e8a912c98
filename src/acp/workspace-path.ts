import { realpath } from "node:fs/promises";
import path from "node:path";
import { RuntimeError } from "../shared/runtime-error.js";

/**
 * A path the model gave (relative to the session's cwd, or absolute) as the absolute path the
 * editor is asked about, refused unless it stays inside `cwd`. Lexical: `..` and absolute paths
 * elsewhere are caught here; symlinks by `assertRealInside`.
 */
export function resolveInWorkspace(cwd: string, given: string): string {
  if (given.includes("\0")) throw outside(given, cwd);
  const absolute = path.resolve(cwd, given);
  if (!isInside(cwd, absolute)) throw outside(given, cwd);
  return absolute;
}

/**
 * The same rule after symlinks: the nearest existing ancestor of `absolute` (the file itself when
 * it exists) must resolve inside the real cwd. Where the files are not on this machine (a remote
 * editor) there is nothing to resolve and the lexical check stands.
 */
export async function assertRealInside(cwd: string, absolute: string, given: string): Promise<void> {
  const realCwd = await realpath(cwd).catch(() => null);
  if (realCwd === null) return;
  let probe = absolute;
  for (;;) {
    const real = await realpath(probe).catch(() => null);
    if (real !== null) {
      if (!isInside(realCwd, real)) throw outside(given, cwd);
      return;
    }
    const parent = path.dirname(probe);
    if (parent === probe) return;
    probe = parent;
  }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

function outside(given: string, cwd: string): RuntimeError {
  return new RuntimeError("invalid_params", `path ${JSON.stringify(given.slice(0, 200))} is outside the session's working directory ${cwd}`, { details: { param: "path" } });
}
