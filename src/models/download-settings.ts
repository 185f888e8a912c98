import path from "node:path";
import type { ModelDownloadEndpoints, ModelFileAccessTokens } from "node-llama-cpp";
import type { Config } from "../config/schema.js";

/** Where models go and how Hugging Face is reached: everything a pull needs besides the reference. */
export interface DownloadSettings {
  /** app.models_dir (absolute). */
  modelsDir: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** app.models_dir, defaulting to <data_dir>/models (resolve-paths already made both absolute). */
export function modelsDirOf(config: Config): string {
  return config.app.models_dir ?? path.join(config.app.data_dir, "models");
}

export function downloadSettingsOf(config: Config, env: Readonly<Record<string, string | undefined>>): DownloadSettings {
  return { modelsDir: modelsDirOf(config), env };
}

/**
 * node-llama-cpp's endpoint and token options from our environment (not the process's: a host
 * may pass another one), for looking up where an `hf:` reference was saved (findDownloaded, no
 * network). Requests that carry the token are made by guardedFetch (hub-access.ts), which sends
 * it to the endpoint's origin only.
 */
export function hubOptions(env: Readonly<Record<string, string | undefined>>): { endpoints?: ModelDownloadEndpoints; tokens?: ModelFileAccessTokens } {
  const endpoint = env.HF_ENDPOINT?.trim();
  const token = env.HF_TOKEN?.trim();
  return {
    ...(endpoint ? { endpoints: { huggingFace: endpoint } } : {}),
    ...(token ? { tokens: { huggingFace: token } } : {}),
  };
}
