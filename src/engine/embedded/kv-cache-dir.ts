import { createHash } from "node:crypto";
import path from "node:path";
import { isSafeId } from "../../shared/safe-id.js";
import { storeName } from "../../shared/store-name.js";

/** `<data_dir>/kv-cache`: one folder per model below it. */
export function kvCacheRoot(dataDir: string): string {
  return path.join(dataDir, "kv-cache");
}

/** `<data_dir>/kv-cache/<storeName of the model name>` (`Qwen` and `qwen` apart on any disk). */
export function kvCacheDir(dataDir: string, modelName: string): string {
  return path.join(kvCacheRoot(dataDir), storeName(modelName));
}

/** The folder earlier versions used (raw name, or a hash), or null when it is the current one. */
export function legacyKvCacheDir(dataDir: string, modelName: string): string | null {
  const folder = isSafeId(modelName) ? modelName : `model-${createHash("sha256").update(modelName).digest("hex").slice(0, 16)}`;
  const dir = path.join(dataDir, "kv-cache", folder);
  return dir === kvCacheDir(dataDir, modelName) ? null : dir;
}
