import type { Context } from "hono";
import { NO_KEY_NAME } from "../keys/api-key.js";
import { KeyScope } from "../keys/key-scope.js";

declare module "hono" {
  interface ContextVariableMap {
    /** The name of the key the request authenticated with ("default": the bearer token; "none": no auth configured). Never the token. */
    keyName: string;
    /** What that key may do. */
    keyScope: KeyScope;
  }
}

/** Where nothing authenticated the request (no token configured, or a route outside /v1/*). */
const UNSCOPED = new KeyScope({ name: NO_KEY_NAME, models: ["*"], endpoints: ["*"], tools: ["*"] });

export function setRequestKey(c: Context, scope: KeyScope): void {
  c.set("keyName", scope.name);
  c.set("keyScope", scope);
}

/** The key name for logs and metrics labels: the one accessor other parts read. */
export function requestKeyName(c: Context): string {
  // Unset outside /v1/* (the type says set: Hono types what a route may read, not whether it was set).
  const name: string | undefined = c.get("keyName");
  return name ?? NO_KEY_NAME;
}

/** The permissions of the request's key (every right where none authenticated it). */
export function requestKeyScope(c: Context): KeyScope {
  const scope: KeyScope | undefined = c.get("keyScope");
  return scope ?? UNSCOPED;
}
