// Locates the pinned Claude Code (@anthropic-ai/claude-code) for the real-client tests of the
// Messages API.
//
// Resolution order (first existing, executable regular file wins):
//   1. $LOCAL_AI_CLAUDE_CODE_BIN
//   2. ${LOCAL_AI_CACHE_DIR:-$HOME/.cache/local-ai}/claude-code/<version>/node_modules/
//      @anthropic-ai/claude-code-<platform>/claude, <version> from scripts/claude-code.version.
// The cache path must match scripts/install-claude-code.sh, which installs it there.
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, parse } from "node:path";
import { fileURLToPath } from "node:url";

export const CLAUDE_CODE_MISSING_MESSAGE = [
  "",
  "==================================================================================",
  "  Claude Code NOT FOUND - the tests that run the real Claude Code cannot run.",
  "",
  "  Install it once (about 10 s and 370 MB; cached outside the repo afterwards):",
  "      npm run install:claude-code   (= bash scripts/install-claude-code.sh)",
  "",
  "  It is cached at ${LOCAL_AI_CACHE_DIR:-~/.cache/local-ai}/claude-code/<version>/",
  "  Or point LOCAL_AI_CLAUDE_CODE_BIN at an existing native claude executable.",
  "==================================================================================",
  "",
].join("\n");

function platformPackage(): string | null {
  const table: Record<string, string> = {
    "linux-x64": "claude-code-linux-x64",
    "linux-arm64": "claude-code-linux-arm64",
    "darwin-x64": "claude-code-darwin-x64",
    "darwin-arm64": "claude-code-darwin-arm64",
  };
  const pkg = table[`${process.platform}-${process.arch}`];
  if (pkg === undefined) return null;
  // musl systems get the -musl build (as the install script picks it).
  const musl = process.platform === "linux" && (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime === undefined;
  return musl ? `${pkg}-musl` : pkg;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** scripts/claude-code.version, searched upward from this module (works from src and dist). */
export function pinnedClaudeCodeVersion(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  const root = parse(dir).root;
  for (;;) {
    const candidate = join(dir, "scripts", "claude-code.version");
    if (existsSync(candidate)) {
      const version = readFileSync(candidate, "utf8").trim();
      return /^\d+\.\d+\.\d+$/.test(version) ? version : null;
    }
    if (dir === root) return null;
    dir = dirname(dir);
  }
}

/** Path to a usable claude executable, or null (see CLAUDE_CODE_MISSING_MESSAGE). */
export function findClaudeCodeBinary(): string | null {
  const fromEnv = process.env["LOCAL_AI_CLAUDE_CODE_BIN"];
  if (fromEnv && isExecutableFile(fromEnv)) return fromEnv;
  const version = pinnedClaudeCodeVersion();
  const pkg = platformPackage();
  if (version === null || pkg === null) return null;
  const cacheRoot = process.env["LOCAL_AI_CACHE_DIR"] || join(homedir(), ".cache", "local-ai");
  const cached = join(cacheRoot, "claude-code", version, "node_modules", "@anthropic-ai", pkg, "claude");
  return isExecutableFile(cached) ? cached : null;
}
