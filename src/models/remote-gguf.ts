import type { GgufFileInfo } from "node-llama-cpp";
import { modelReferenceKind } from "../config/model-reference.js";
import { ggufMetadataProblems } from "../engine/plan/validate-gguf.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { hubOptions } from "./download-settings.js";
import { invalidReference } from "./find-downloaded.js";

/**
 * A failed header read is retried a little (a flaky network), not node-llama-cpp's default ten
 * times with up to 16 s between tries: a user waiting on `pull` should hear about a wrong URL soon.
 */
const HEADER_FETCH_RETRIES = { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 2000 };

/**
 * The GGUF metadata and tensor table of a model that is not downloaded, read over the network by
 * node-llama-cpp's GGUF reader: ranged GETs of the header (it reads ahead a few MiB per request),
 * never the weights. An `hf:` reference is resolved through the hub's manifest first; split
 * models have every part's header read. Throws model_missing (unreachable, not found, not a
 * usable GGUF) or invalid_params (not a reference).
 */
export async function readRemoteGguf(ref: string, env: Readonly<Record<string, string | undefined>>, signal?: AbortSignal): Promise<GgufFileInfo> {
  const { readGgufFileInfo } = await import("node-llama-cpp");
  let info: GgufFileInfo;
  try {
    info = await readGgufFileInfo(ref, {
      sourceType: "network",
      logWarnings: false,
      fetchRetryOptions: HEADER_FETCH_RETRIES,
      ...hubOptions(env),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    signal?.throwIfAborted();
    const message = error instanceof Error ? error.message : String(error);
    if (/^Invalid (Hugging Face URI|URL)/.test(message)) throw invalidReference(ref, message, error);
    throw new RuntimeError("model_missing", `Cannot read the GGUF header of ${ref}: ${describeReadError(message, ref)}`, {
      details: { ref, reason: "unreachable" },
      cause: error,
    });
  }
  const problems = ggufMetadataProblems(info.metadata);
  if (problems.length > 0) {
    throw new RuntimeError("model_missing", `${ref} is not a loadable model: ${problems.join("; ")}`, { details: { ref, reason: "bad_metadata", problems } });
  }
  return info;
}

/** node-llama-cpp's and fetch's messages, with the usual causes named. */
function describeReadError(message: string, ref: string): string {
  if (/ 404\b|does not exist/.test(message)) {
    return modelReferenceKind(ref) === "hf"
      ? `${message} (no such repository, file or quantization: check the name; \`hf:owner/repo\` without a quantization picks Q4_K_M)`
      : `${message} (no file at this URL)`;
  }
  if (/ 401\b| 403\b/.test(message)) return `${message} (a gated or private repository: set HF_TOKEN to a token that may read it)`;
  if (/fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(message)) return `${message} (the server cannot be reached: check the network, or HF_ENDPOINT for a mirror)`;
  return message;
}
