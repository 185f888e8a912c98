import { modelReferenceKind } from "../config/model-reference.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { hubOptions, type DownloadSettings } from "./download-settings.js";
import { DEFAULT_HUB } from "./hub-access.js";
import { fileNameForReference } from "./reference-file.js";

/**
 * The local file of a reference that has been downloaded (every part of a split model), or null.
 * Never touches the network: node-llama-cpp's resolveModelFile with `download: false` looks for the
 * names the reference would be saved under. A partial download (`<file>.ipull`) is not a file yet.
 * A reference that cannot be parsed is invalid_params.
 */
export async function findDownloaded(ref: string, settings: DownloadSettings): Promise<string | null> {
  if (modelReferenceKind(ref) === "path") throw new RuntimeError("invalid_params", `${ref} is a local path, not a model reference`);
  const { resolveModelFile } = await import("node-llama-cpp");
  const fileName = fileNameForReference(ref);
  try {
    return await resolveModelFile(ref, {
      directory: settings.modelsDir,
      download: false,
      cli: false,
      // A URL is looked for under its own name, whatever its host (never as a hub reference).
      ...(fileName === undefined ? hubOptions(settings.env) : { fileName, endpoints: { huggingFace: DEFAULT_HUB } }),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/^No model file found|^Not all split parts/.test(message)) return null;
    throw invalidReference(ref, message, error);
  }
}

export function invalidReference(ref: string, reason: string, cause?: unknown): RuntimeError {
  return new RuntimeError(
    "invalid_params",
    `"${ref}" is not a model reference local-ai can get (${reason}). Use an https:// URL of a .gguf file, hf:owner/repo:QUANT (e.g. hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M) or hf:owner/repo/file.gguf`,
    { details: { ref }, ...(cause === undefined ? {} : { cause }) },
  );
}
