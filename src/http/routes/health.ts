import type { Hono } from "hono";
import { healthBody, publicHealthBody } from "../health-status.js";
import type { HttpDeps } from "../http-deps.js";
import type { InFlightWork } from "../in-flight-work.js";
import { bearerMatcher } from "../middleware/bearer-auth.js";

/**
 * GET /health: never behind auth (probes carry no token); the same body for 200 and 503. Only a
 * request with the configured bearer token sees the details (paths, pids, errors as logged); any
 * other gets the same states with file paths redacted.
 */
export function registerHealthRoute(app: Hono, deps: HttpDeps, inFlight: InFlightWork): void {
  const token = deps.settings.bearerToken;
  const authorized = token === null ? () => false : bearerMatcher(token);
  app.get("/health", (c) => {
    const { status, body } = healthBody(deps.health(), deps.version, inFlight.size);
    c.header("Cache-Control", "no-store");
    return c.json(authorized(c.req.header("authorization")) ? body : publicHealthBody(body), status);
  });
}
