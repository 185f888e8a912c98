import type { Context } from "hono";

/**
 * The name of the API key a request authenticated with, as the metrics label `key` and the
 * access log's `key` carry it (never the token itself). The auth middleware sets it: "default" for
 * the single `http.bearer_token`; a named key its name. "none": no key was checked (no auth is
 * configured, the route is open, or the request was refused before its key was known).
 */
export function setKeyName(c: Context, name: string): void {
  c.set("keyName", name);
}

export function keyNameOf(c: Context): string {
  const name: unknown = c.get("keyName");
  return typeof name === "string" ? name : "none";
}
