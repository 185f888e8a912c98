import type { Context, MiddlewareHandler } from "hono";
import type { Logger } from "pino";
import { HttpError } from "../http-error.js";
import { NO_KEY_NAME, type ApiKey } from "../keys/api-key.js";
import { KeyLimiter } from "../keys/key-limiter.js";
import { bearerToken, type KeyRing } from "../keys/key-ring.js";
import { KeyScope } from "../keys/key-scope.js";
import { releaseWithBody } from "../keys/release-with-body.js";
import { setRequestKey } from "../request/request-key.js";
import { requestLogger } from "../request/request-record.js";

/** GET /v1/models and /v1/models/{id}: every key may list, filtered to its own models (clients list before anything else). */
const MODEL_LISTING = /^\/v1\/models(\/.+)?$/;

interface KeyState {
  scope: KeyScope;
  limiter: KeyLimiter | null;
}

/**
 * /v1/*: which key sent the request (`Authorization: Bearer <token>`, or `x-api-key: <token>` as
 * Anthropic clients send it; with both, the Bearer decides), whether it may call this endpoint, and its limits (429 with
 * Retry-After). The key's name and scope go on the context (request-key.ts) for the routes (the
 * model and tool checks) and for logs and metrics. A null ring: no auth, every request is "none".
 * A held concurrency slot is given back when the response has ended, a stream included.
 */
export function keyAuth(ring: KeyRing | null, keys: readonly ApiKey[], logger: Logger): MiddlewareHandler {
  const states = new Map<string, KeyState>(
    keys.map((key) => [
      key.name,
      { scope: new KeyScope(key), limiter: key.maxConcurrent === null && key.requestsPerMinute === null ? null : new KeyLimiter(key) },
    ]),
  );
  const open: KeyState = { scope: new KeyScope({ name: NO_KEY_NAME, models: ["*"], endpoints: ["*"], tools: ["*"] }), limiter: null };
  return async (c, next) => {
    const state = ring === null ? open : states.get(authenticate(c, ring).name);
    if (state === undefined) throw new Error("a key of the ring has no state");
    setRequestKey(c, state.scope);
    if (!MODEL_LISTING.test(c.req.path)) state.scope.assertEndpoint(c.req.method, c.req.path);
    const admitted = state.limiter?.admit() ?? null;
    if (admitted !== null && !admitted.ok) {
      requestLogger(c, logger).info({ key: state.scope.name, limit: admitted.limit, path: c.req.path }, "request over its key's limit");
      c.header("Retry-After", String(admitted.retryAfterS));
      const reached = admitted.limit === "max_concurrent" ? "concurrency_limit_exceeded" : "rate_limit_exceeded";
      throw new HttpError(reached, `API key "${state.scope.name}" is over its ${admitted.limit} limit; retry after ${admitted.retryAfterS} s`);
    }
    if (admitted === null) {
      await next();
      return;
    }
    try {
      await next();
    } catch (error) {
      admitted.release();
      throw error;
    }
    c.res = releaseWithBody(c.res, c.req.raw.signal, admitted.release);
  };
}

/** With both headers the Bearer decides (KeyRing.fromHeaders, docs/operations.md). */
function authenticate(c: Context, ring: KeyRing): ApiKey {
  const header = c.req.header("authorization");
  const apiKey = c.req.header("x-api-key");
  const key = ring.fromHeaders(header, apiKey);
  if (key !== null) return key;
  c.header("WWW-Authenticate", 'Bearer realm="local-ai"');
  const sent = bearerToken(header) !== null || (apiKey ?? "").trim() !== "";
  throw new HttpError("unauthorized", sent ? "Incorrect bearer token" : "Missing bearer token: send Authorization: Bearer <token> (or x-api-key: <token>)");
}
