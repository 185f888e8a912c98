import type { ModelConfig } from "../config/schema.js";
import { assertGgufComplete } from "../engine/gguf/gguf-completeness.js";
import { checkGgufFile } from "../engine/gguf/check-gguf-file.js";
import { readGgufHeader, type GgufHeader } from "../engine/gguf/read-gguf-header.js";
import type { DownloadSettings } from "./download-settings.js";
import { locateModelFile } from "./model-files.js";

/**
 * doctor's file check of a configured local model: located (a reference must be downloaded), a
 * GGUF header we can read, and every tensor's data present. Metadata llama.cpp cannot use is left
 * to the plan check. Throws model_missing with `details.reason` (not_downloaded, the header
 * problems of readGgufHeader, truncated).
 */
export async function inspectModelFile(name: string, model: ModelConfig, settings: DownloadSettings, signal?: AbortSignal): Promise<{ path: string; header: GgufHeader }> {
  const path = await locateModelFile(name, model, settings);
  const header = await readGgufHeader(path);
  await checkGgufFile(path);
  const { readGgufFileInfo } = await import("node-llama-cpp");
  // A header the JS reader cannot parse is the plan check's to report (bad_gguf); only truncation here.
  const info = await readGgufFileInfo(path, { sourceType: "filesystem", logWarnings: false, ...(signal ? { signal } : {}) }).catch(() => null);
  if (info !== null) await assertGgufComplete(path, info);
  return { path, header };
}
