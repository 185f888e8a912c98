import type { GgufFileInfo } from "node-llama-cpp";
import { RuntimeError } from "../../shared/runtime-error.js";
import { assertGgufComplete } from "../gguf/gguf-completeness.js";
import { checkGgufFile } from "../gguf/check-gguf-file.js";
import { readGgufHeader } from "../gguf/read-gguf-header.js";

/**
 * Architectures whose blocks have no attention heads or feed-forward size (state-space models):
 * llama.cpp does not read those keys for them, so we must not require them either.
 */
const NO_ATTENTION_ARCHS: ReadonlySet<string> = new Set(["mamba", "mamba2"]);

/**
 * What is missing or unusable in the metadata llama.cpp needs to load a model; empty when all is
 * there. Why it matters: llama.cpp sizes its tensors from these numbers, and a missing or zero
 * feed_forward_length or head_count trips a GGML_ASSERT that aborts the whole process (our stdio
 * server with it) instead of throwing. Reading the metadata in JS first turns that into an error.
 */
export function ggufMetadataProblems(metadata: unknown): string[] {
  const problems: string[] = [];
  const arch = valueAt(metadata, "general.architecture");
  if (typeof arch !== "string" || arch === "") return ["general.architecture is missing (the file does not say what model it is)"];
  const sizes = ["block_count", "embedding_length", "context_length"];
  if (!NO_ATTENTION_ARCHS.has(arch)) sizes.push("feed_forward_length", "attention.head_count");
  for (const suffix of sizes) {
    const key = `${arch}.${suffix}`;
    const value = valueAt(metadata, key);
    if (value === undefined) problems.push(`${key} is missing`);
    else if (!isPositiveSize(value)) problems.push(`${key} is ${describe(value)}, not a positive number`);
  }
  const tokenizer = valueAt(metadata, "tokenizer.ggml.model");
  if (typeof tokenizer !== "string" || tokenizer === "") problems.push("tokenizer.ggml.model is missing");
  else if (tokenizer !== "none") {
    const tokens = valueAt(metadata, "tokenizer.ggml.tokens");
    if (!Array.isArray(tokens) || tokens.length === 0) problems.push("tokenizer.ggml.tokens is missing or empty (the file has no vocabulary)");
  }
  return problems;
}

/**
 * Checks a GGUF file before anything native touches it: the header (exists, is GGUF, a supported
 * version), its counts and lengths within bounds (checkGgufFile: a header that lies is refused
 * before node-llama-cpp's reader would exhaust memory on it), then the metadata through node-llama-cpp's JS reader (no llama.cpp involved), then
 * that the file holds every tensor's data (a truncated download is `reason: "truncated"`). Throws
 * RuntimeError("model_missing") with the reason; returns the file info for the caller to reuse.
 * The embedded engine calls this before loading; plan calls it before estimating (node-llama-cpp's
 * estimates load the metadata into llama.cpp and would abort the same way).
 */
export async function validateGguf(path: string, options: { signal?: AbortSignal } = {}): Promise<GgufFileInfo> {
  await readGgufHeader(path);
  await checkGgufFile(path);
  const { readGgufFileInfo } = await import("node-llama-cpp");
  let info: GgufFileInfo;
  try {
    // filesystem only: a path that looks like a URL must never be fetched.
    info = await readGgufFileInfo(path, { sourceType: "filesystem", logWarnings: false, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    options.signal?.throwIfAborted();
    throw new RuntimeError("model_missing", `${path} cannot be read as a GGUF model: ${(error as Error).message}`, {
      details: { path, reason: "bad_gguf" },
      cause: error,
    });
  }
  // Before the metadata: a file cut short looks like one with missing keys.
  await assertGgufComplete(path, info);
  const problems = ggufMetadataProblems(info.metadata);
  if (problems.length > 0) {
    throw new RuntimeError(
      "model_missing",
      `${path} is not a loadable model: ${problems.join("; ")}. llama.cpp needs these to load it (loading it anyway can crash the process); get a complete GGUF of this model or re-convert it with llama.cpp's convert_hf_to_gguf.py`,
      { details: { path, reason: "bad_metadata", problems } },
    );
  }
  return info;
}

/** `metadata.llama.attention.head_count` for "llama.attention.head_count" (the reader nests on dots). */
function valueAt(root: unknown, dotted: string): unknown {
  let value = root;
  for (const part of dotted.split(".")) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A positive integer, or a per-layer array with at least one (hybrid models have 0 for some layers). */
function isPositiveSize(value: unknown): boolean {
  const positive = (item: unknown): boolean => (typeof item === "number" && Number.isInteger(item) && item > 0) || (typeof item === "bigint" && item > 0n);
  if (Array.isArray(value)) return value.some(positive) && value.every((item) => positive(item) || item === 0 || item === 0n);
  return positive(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return typeof value === "string" ? `"${value}"` : String(value);
}
