import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** node-llama-cpp's default hub, and what a URL reference is resolved against (no mirror). */
export const DEFAULT_HUB = "https://huggingface.co/";

/** Where the hub is (HF_ENDPOINT, MODEL_ENDPOINT, else huggingface.co) and the token it alone may see. */
export interface HubAccess {
  /** The endpoint, ending in "/". */
  endpoint: string;
  /** Its origin: the only one HF_TOKEN is ever sent to. */
  origin: string;
  token: string | undefined;
}

/**
 * The hub endpoint and token from the environment given (a host may pass another one than the
 * process's). Without HF_TOKEN the token is huggingface-cli's file (HF_TOKEN_PATH, else
 * $HF_HOME/token, else ~/.cache/huggingface/token), as node-llama-cpp and llama.cpp look for it.
 */
export async function hubAccessOf(env: Readonly<Record<string, string | undefined>>): Promise<HubAccess> {
  const endpoint = hubEndpointOf(env);
  return { endpoint, origin: new URL(endpoint).origin, token: env.HF_TOKEN?.trim() || (await tokenFile(env)) };
}

/** HF_ENDPOINT (or llama.cpp's MODEL_ENDPOINT) when it is an http(s) URL, else the default hub; ends in "/". */
export function hubEndpointOf(env: Readonly<Record<string, string | undefined>>): string {
  for (const candidate of [env.MODEL_ENDPOINT, env.HF_ENDPOINT]) {
    const value = candidate?.trim();
    if (value === undefined || value === "") continue;
    try {
      const url = new URL(value);
      if (url.protocol === "http:" || url.protocol === "https:") return value.endsWith("/") ? value : `${value}/`;
    } catch {
      // An invalid endpoint is ignored, as node-llama-cpp does: the default hub applies.
    }
  }
  return DEFAULT_HUB;
}

async function tokenFile(env: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  const home = env.HF_HOME || path.join(env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), ".cache"), "huggingface");
  const file = env.HF_TOKEN_PATH || path.join(home, "token");
  const token = (await readFile(file, "utf8").catch(() => "")).trim();
  return token === "" ? undefined : token;
}
