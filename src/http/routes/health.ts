import type { Hono } from "hono";
import { healthBody } from "../health-status.js";
import type { HttpDeps } from "../http-deps.js";

/** GET /health: never behind auth (probes carry no token); the same body for 200 and 503. */
export function registerHealthRoute(app: Hono, deps: HttpDeps): void {
  app.get("/health", (c) => {
    const { status, body } = healthBody(deps.health(), deps.version);
    c.header("Cache-Control", "no-store");
    return c.json(body, status);
  });
}
