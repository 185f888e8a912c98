// Locates the pinned Claude Code (@anthropic-ai/claude-code) for the real-client tests of the
// Messages API. It only finds the file, never runs it: the binary is started by client-process.ts
// alone, inside a loopback-only network namespace (`unshare --net`, loopback-netns.ts).
//
// Resolution order (first existing, executable regular file wins):
//   1. $LOCAL_AI_CLAUDE_CODE_BIN
//   2. ${LOCAL_AI_CACHE_DIR:-$HOME/.cache/local-ai}/claude-code/<version>/node_modules/
//      @anthropic-ai/claude-code-<platform>/claude, <version> from scripts/claude-code.version.
// The cache path must match scripts/install-claude-code.sh, which installs it there.
import { findExecutable, localAiCachePath, pinnedVersion } from "./cached-binary.js";

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

/** scripts/claude-code.version, or null. */
export function pinnedClaudeCodeVersion(): string | null {
  return pinnedVersion("claude-code.version");
}

/** Where scripts/install-claude-code.sh puts the native binary (whether or not it exists yet). */
function claudeCodeCachePath(): string | null {
  const version = pinnedClaudeCodeVersion();
  const pkg = platformPackage();
  if (version === null || pkg === null) return null;
  return localAiCachePath("claude-code", version, "node_modules", "@anthropic-ai", pkg, "claude");
}

/** Path to a usable claude executable, or null (see CLAUDE_CODE_MISSING_MESSAGE). */
export function findClaudeCodeBinary(): string | null {
  return findExecutable("LOCAL_AI_CLAUDE_CODE_BIN", claudeCodeCachePath());
}
