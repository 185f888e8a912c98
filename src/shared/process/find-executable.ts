import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";
import { envValue } from "../platform-env.js";

export type ExecutableLookup =
  | { found: true; path: string }
  | { found: false; reason: string };

/**
 * Resolves a configured binary the way a spawn would: an absolute path is taken as is, a bare
 * name is searched on PATH. On Windows PATHEXT applies to both (`C:\llama\llama-server` finds
 * `llama-server.exe`) and variable names have no case (`Path`). Reads PATH from the injected env
 * so tests and the stdio host see the same answer the engine will.
 */
export async function findExecutable(
  binary: string,
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): Promise<ExecutableLookup> {
  const extensions = platform === "win32" ? windowsExtensions(binary, envValue(env, "PATHEXT", platform)) : [""];
  if (path.isAbsolute(binary)) {
    const first = await executableProblem(binary);
    if (first === null) return { found: true, path: binary };
    for (const ext of extensions.slice(1)) if ((await executableProblem(binary + ext)) === null) return { found: true, path: binary + ext };
    return { found: false, reason: `${binary} ${first}` };
  }
  const searchPath = envValue(env, "PATH", platform) ?? "";
  const dirs = searchPath.split(platform === "win32" ? ";" : ":").filter((dir) => dir !== "");
  for (const dir of dirs) {
    for (const ext of extensions) {
      const candidate = path.join(dir, binary + ext);
      if ((await executableProblem(candidate)) === null) return { found: true, path: candidate };
    }
  }
  return { found: false, reason: `"${binary}" was not found on PATH (${dirs.length} folder${dirs.length === 1 ? "" : "s"} searched)` };
}

/** "" (the name as given) then PATHEXT's extensions, unless the name already ends with one of them. */
export function windowsExtensions(binary: string, pathext: string | undefined): string[] {
  const listed = (pathext ?? ".COM;.EXE;.BAT;.CMD").split(";").filter((ext) => ext !== "");
  const lower = binary.toLowerCase();
  return listed.some((ext) => lower.endsWith(ext.toLowerCase())) ? [""] : ["", ...listed];
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
