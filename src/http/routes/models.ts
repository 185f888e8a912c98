import type { Hono } from "hono";
import type { HttpDeps } from "../http-deps.js";

/** GET /v1/models: agents (not GGUF files) are what a client picks, so they are the "models". */
export function registerModelsRoute(app: Hono, deps: HttpDeps, startedAt: number): void {
  app.get("/v1/models", (c) =>
    c.json({
      object: "list",
      data: Object.keys(deps.agents).map((id) => ({ id, object: "model", created: startedAt, owned_by: "local-ai" })),
    }),
  );
}
