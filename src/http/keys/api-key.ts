/**
 * An API key as serve-http checks it: its token and what it may do (http.keys, docs/operations.md
 * "Keys"). The name is what logs and metrics carry; the token never leaves the key ring.
 */
export interface ApiKey {
  name: string;
  token: string;
  /** Globs over the agent a request resolves to (or the `llama.models` name it names directly). */
  models: readonly string[];
  /** Globs over the request path (`/v1/chat/*`); `*` crosses `/`. */
  endpoints: readonly string[];
  /** Globs over tool names, as `agents.<name>.tools`. */
  tools: readonly string[];
  maxConcurrent: number | null;
  requestsPerMinute: number | null;
}

/** The bearer token's name (`http.bearer_token`, `--bearer-token`): a key with every right. */
export const DEFAULT_KEY_NAME = "default";
/** What a request goes by when the server has no token at all. */
export const NO_KEY_NAME = "none";

export function fullRightsKey(name: string, token: string): ApiKey {
  return { name, token, models: ["*"], endpoints: ["*"], tools: ["*"], maxConcurrent: null, requestsPerMinute: null };
}
