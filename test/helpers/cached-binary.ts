// The part the binary locators (codex-binary.ts, claude-code-binary.ts, llama-server-binary.ts)
// share: the local-ai cache root, a search upward from this module (works from src and dist), and
// "$ENV_VAR, else the cached path, if it is an executable regular file". Finding only: the coding
// clients are run by client-process.ts inside `unshare --net` (loopback only), never from here.
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, parse } from "node:path";
import { fileURLToPath } from "node:url";

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** ${LOCAL_AI_CACHE_DIR:-$HOME/.cache/local-ai}, joined with `parts` (the install scripts' layout). */
export function localAiCachePath(...parts: string[]): string {
  const cacheRoot = process.env["LOCAL_AI_CACHE_DIR"] || join(homedir(), ".cache", "local-ai");
  return join(cacheRoot, ...parts);
}

/** The first `<ancestor>/<relative>` that exists, searched upward from this module, or null. */
export function findUpward(relative: string): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  const root = parse(dir).root;
  for (;;) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    if (dir === root) return null;
    dir = dirname(dir);
  }
}

/** The x.y.z in scripts/<file> (a pinned client version), or null. */
export function pinnedVersion(file: string): string | null {
  const path = findUpward(join("scripts", file));
  if (path === null) return null;
  const version = readFileSync(path, "utf8").trim();
  return /^\d+\.\d+\.\d+$/.test(version) ? version : null;
}

/** $envVar if it names an executable regular file, else `cached` if it does, else null. */
export function findExecutable(envVar: string, cached: string | null): string | null {
  const fromEnv = process.env[envVar];
  if (fromEnv && isExecutableFile(fromEnv)) return fromEnv;
  if (cached !== null && isExecutableFile(cached)) return cached;
  return null;
}
