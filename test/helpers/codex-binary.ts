// Locates the pinned Codex CLI (@openai/codex) for the real-client tests of the Responses API.
// It only finds the file, never runs it: the binary is started by client-process.ts alone, inside a
// loopback-only network namespace (`unshare --net`, loopback-netns.ts).
//
// Resolution order (first existing, executable regular file wins):
//   1. $LOCAL_AI_CODEX_BIN
//   2. ${LOCAL_AI_CACHE_DIR:-$HOME/.cache/local-ai}/codex/<version>/node_modules/@openai/
//      codex-<platform>/vendor/<target triple>/bin/codex, <version> from scripts/codex.version.
// The cache path must match scripts/install-codex.sh, which installs it there.
import { findExecutable, localAiCachePath, pinnedVersion } from "./cached-binary.js";

export const CODEX_MISSING_MESSAGE = [
  "",
  "==================================================================================",
  "  Codex CLI NOT FOUND - the tests that run the real Codex CLI cannot run.",
  "",
  "  Install it once (about 10 s and 400 MB; cached outside the repo afterwards):",
  "      npm run install:codex        (= bash scripts/install-codex.sh)",
  "",
  "  It is cached at ${LOCAL_AI_CACHE_DIR:-~/.cache/local-ai}/codex/<version>/",
  "  Or point LOCAL_AI_CODEX_BIN at an existing native codex executable.",
  "==================================================================================",
  "",
].join("\n");

/** The platform package and target triple @openai/codex's bin/codex.js picks, or null. */
function platformTarget(): { pkg: string; triple: string } | null {
  const key = `${process.platform}-${process.arch}`;
  const table: Record<string, { pkg: string; triple: string }> = {
    "linux-x64": { pkg: "codex-linux-x64", triple: "x86_64-unknown-linux-musl" },
    "linux-arm64": { pkg: "codex-linux-arm64", triple: "aarch64-unknown-linux-musl" },
    "darwin-x64": { pkg: "codex-darwin-x64", triple: "x86_64-apple-darwin" },
    "darwin-arm64": { pkg: "codex-darwin-arm64", triple: "aarch64-apple-darwin" },
  };
  return table[key] ?? null;
}

/** scripts/codex.version, or null. */
export function pinnedCodexVersion(): string | null {
  return pinnedVersion("codex.version");
}

/** Where scripts/install-codex.sh puts the native binary (whether or not it exists yet). */
function codexCachePath(): string | null {
  const version = pinnedCodexVersion();
  const target = platformTarget();
  if (version === null || target === null) return null;
  return localAiCachePath("codex", version, "node_modules", "@openai", target.pkg, "vendor", target.triple, "bin", "codex");
}

/** Path to a usable codex executable, or null (see CODEX_MISSING_MESSAGE). */
export function findCodexBinary(): string | null {
  return findExecutable("LOCAL_AI_CODEX_BIN", codexCachePath());
}
