import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";

export type ExecutableLookup =
  | { found: true; path: string }
  | { found: false; reason: string };

/**
 * Resolves a configured binary the way a spawn would: an absolute path is taken as is, a bare
 * name is searched on PATH (with PATHEXT on Windows). Reads PATH from the injected env so tests
 * and the stdio host see the same answer the engine will.
 */
export async function findExecutable(
  binary: string,
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): Promise<ExecutableLookup> {
  if (path.isAbsolute(binary)) {
    const problem = await executableProblem(binary);
    return problem === null ? { found: true, path: binary } : { found: false, reason: `${binary} ${problem}` };
  }
  const searchPath = env.PATH ?? env.Path ?? "";
  const dirs = searchPath.split(path.delimiter).filter((dir) => dir !== "");
  const extensions = platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter((ext) => ext !== "")] : [""];
  for (const dir of dirs) {
    for (const ext of extensions) {
      const candidate = path.join(dir, binary + ext);
      if ((await executableProblem(candidate)) === null) return { found: true, path: candidate };
    }
  }
  return { found: false, reason: `"${binary}" was not found on PATH (${dirs.length} folder${dirs.length === 1 ? "" : "s"} searched)` };
}

/** null when `file` is an executable regular file; otherwise what is wrong, in words. */
async function executableProblem(file: string): Promise<string | null> {
  try {
    const stats = await stat(file);
    if (!stats.isFile()) return "is not a regular file";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : `cannot be inspected: ${(error as Error).message}`;
  }
  try {
    // X_OK is meaningless on Windows (always passes for existing files), which is the right answer there.
    await access(file, constants.X_OK);
    return null;
  } catch {
    return "is not executable (chmod +x it)";
  }
}
