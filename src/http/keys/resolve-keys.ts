import type { HttpKeyConfig } from "../../config/schema.js";
import { readTokenFile } from "./bearer-token.js";
import { DEFAULT_KEY_NAME, fullRightsKey, type ApiKey } from "./api-key.js";

/**
 * `http.keys` with their tokens read (token_file refused when others may read it, token_env
 * refused when unset). Two keys with one token (the bearer token, the key "default", among them) are a startup error: a
 * token must name one key.
 * Errors name keys and settings, never tokens.
 */
export async function resolveApiKeys(options: { bearerToken: string | null; keys: readonly HttpKeyConfig[]; env: Readonly<Record<string, string | undefined>> }): Promise<ApiKey[]> {
  const resolved: ApiKey[] = [];
  for (const [index, key] of options.keys.entries()) {
    const token = await tokenOf(key, index, options.env);
    resolved.push({ name: key.name, token, models: key.models, endpoints: key.endpoints, tools: key.tools, maxConcurrent: key.max_concurrent, requestsPerMinute: key.requests_per_minute });
  }
  assertDistinctTokens([...(options.bearerToken === null ? [] : [fullRightsKey(DEFAULT_KEY_NAME, options.bearerToken)]), ...resolved]);
  return resolved;
}

async function tokenOf(key: HttpKeyConfig, index: number, env: Readonly<Record<string, string | undefined>>): Promise<string> {
  if (key.token !== null) return key.token;
  if (key.token_file !== null) return readTokenFile(key.token_file, `http.keys[${index}] ("${key.name}") token_file`);
  const name = key.token_env ?? "";
  const value = env[name];
  if (value === undefined || value.trim() === "") throw new Error(`http.keys[${index}] ("${key.name}") token_env: $${name} is not set`);
  return value.trim();
}

/** Names, not tokens: the error must not carry the secret it is about. */
export function assertDistinctTokens(keys: readonly ApiKey[]): void {
  const owners = new Map<string, string>();
  for (const key of keys) {
    const first = owners.get(key.token);
    if (first !== undefined) throw new Error(`API keys "${first}" and "${key.name}" have the same token: each key needs its own`);
    owners.set(key.token, key.name);
  }
}
