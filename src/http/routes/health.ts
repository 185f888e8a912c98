import type { Hono } from "hono";
import { healthBody, publicHealthBody } from "./health-status.js";
import type { HttpDeps } from "../http-deps.js";
import type { InFlightWork } from "../request/in-flight-work.js";
import type { KeyRing } from "../keys/key-ring.js";
import { KeyScope } from "../keys/key-scope.js";

/**
 * GET /health: never behind auth (probes carry no token); the same body for 200 and 503. Only a
 * request with a key whose `endpoints` allow `/health` (the bearer token, and every key with the
 * default `["*"]`) sees the details (paths, pids, errors as logged); any other gets the same
 * states with file paths redacted.
 */
export function registerHealthRoute(app: Hono, deps: HttpDeps, inFlight: InFlightWork, ring: KeyRing | null): void {
  const authorized = (header: string | undefined): boolean => {
    const key = ring?.fromAuthorization(header) ?? null;
    return key !== null && new KeyScope(key).allowsEndpoint("/health");
  };
  app.get("/health", (c) => {
    const { status, body } = healthBody(deps.health(), deps.version, inFlight.size);
    c.header("Cache-Control", "no-store");
    return c.json(authorized(c.req.header("authorization")) ? body : publicHealthBody(body), status);
  });
}
