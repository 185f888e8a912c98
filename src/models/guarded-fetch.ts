import { RuntimeError } from "../shared/runtime-error.js";
import type { HubAccess } from "./hub-access.js";

/** Redirects followed before giving up (the hub uses one, a mirror perhaps two). */
export const MAX_REDIRECTS = 8;

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export interface GuardedResponse {
  response: Response;
  /** The URL that answered, after the redirects. */
  url: string;
  /** Whether that request carried the token (the token goes to the hub's origin only, and never after an origin change). */
  authorized: boolean;
}

/**
 * fetch with the redirects followed here (`redirect: "manual"`), so that HF_TOKEN goes to the
 * hub's origin and nowhere else: it is sent while the URL is on that origin and dropped for good
 * at the first redirect to another origin (a mirror redirecting to a CDN or elsewhere). Only
 * http(s) redirects, at most MAX_REDIRECTS. The caller reads or cancels the response's body.
 */
export async function guardedFetch(url: string, access: HubAccess, init: { headers?: Record<string, string>; signal?: AbortSignal; authorized?: boolean } = {}): Promise<GuardedResponse> {
  let current = new URL(url);
  let authorized = (init.authorized ?? true) && access.token !== undefined && current.origin === access.origin;
  for (let hop = 0; ; hop += 1) {
    const response = await fetch(current, {
      redirect: "manual",
      headers: { ...init.headers, ...(authorized ? { Authorization: `Bearer ${access.token}` } : {}) },
      ...(init.signal ? { signal: init.signal } : {}),
    });
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null) return { response, url: current.href, authorized };
    await response.body?.cancel().catch(() => undefined);
    if (hop >= MAX_REDIRECTS) throw unreachable(url, `more than ${MAX_REDIRECTS} redirects`);
    const next = new URL(location, current);
    if (next.protocol !== "http:" && next.protocol !== "https:") throw unreachable(url, `a redirect to ${next.protocol} (only http and https are followed)`);
    if (next.origin !== current.origin) authorized = false;
    current = next;
  }
}

function unreachable(url: string, why: string): RuntimeError {
  return new RuntimeError("model_missing", `Cannot download ${url}: ${why}`, { details: { ref: url, reason: "unreachable" } });
}
