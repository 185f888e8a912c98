// Locates a real `llama-server` binary for tests and benchmarks.
//
// Resolution order (first existing, executable regular file wins):
//   1. $LOCAL_AI_LLAMA_SERVER_BIN
//   2. ${LOCAL_AI_CACHE_DIR:-$HOME/.cache/local-ai}/llama-server/<tag>/bin/llama-server
//      where <tag> is the llama.cpp release node-llama-cpp was built from
//      (node_modules/node-llama-cpp/llama/binariesGithubRelease.json "release",
//      falling back to llama.cpp.info.json "tag").
// The cache path must match scripts/build-llama-server.sh, which produces that binary.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findExecutable, findUpward, localAiCachePath } from "./cached-binary.js";

export const LLAMA_SERVER_MISSING_MESSAGE = [
  "",
  "==================================================================================",
  "  llama-server binary NOT FOUND - tests that need a real llama-server cannot run.",
  "",
  "  Build it once (10-15 minutes on 2 cores; cached afterwards, reruns are instant):",
  "      npm run build:llama-server        (= bash scripts/build-llama-server.sh)",
  "",
  "  It is cached at ${LOCAL_AI_CACHE_DIR:-~/.cache/local-ai}/llama-server/<tag>/bin/llama-server",
  "  Or point LOCAL_AI_LLAMA_SERVER_BIN at an existing llama-server executable.",
  "==================================================================================",
  "",
].join("\n");

const TAG_PATTERN = /^[A-Za-z0-9._-]+$/;

function readJsonString(file: string, field: string): string | null {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof parsed !== "object" || parsed === null) return null;
    const value = (parsed as Record<string, unknown>)[field];
    return typeof value === "string" && value !== "" ? value : null;
  } catch {
    return null;
  }
}

/** The llama.cpp release tag node-llama-cpp ships, or null if it cannot be read. */
export function llamaCppReleaseTag(): string | null {
  const llamaDir = findUpward(join("node_modules", "node-llama-cpp", "llama"));
  if (llamaDir === null) return null;
  const tag =
    readJsonString(join(llamaDir, "binariesGithubRelease.json"), "release") ??
    readJsonString(join(llamaDir, "llama.cpp.info.json"), "tag");
  return tag !== null && TAG_PATTERN.test(tag) ? tag : null;
}

/** Where scripts/build-llama-server.sh installs the binary (whether or not it exists yet). */
export function llamaServerCachePath(): string | null {
  const tag = llamaCppReleaseTag();
  if (tag === null) return null;
  return localAiCachePath("llama-server", tag, "bin", "llama-server");
}

/** Path to a usable llama-server executable, or null (see LLAMA_SERVER_MISSING_MESSAGE). */
export function findLlamaServerBinary(): string | null {
  return findExecutable("LOCAL_AI_LLAMA_SERVER_BIN", llamaServerCachePath());
}
