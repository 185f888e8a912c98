import type { Hono } from "hono";
import type { HttpDeps } from "../http-deps.js";
import { HttpError } from "../http-error.js";

/**
 * GET /v1/models and /v1/models/{id}: agents (not GGUF files) are what a client picks, so they
 * are the "models". Each carries its model's facts as extra fields (clients ignore unknown
 * fields): context_length, engine and capabilities.
 */
export function registerModelsRoute(app: Hono, deps: HttpDeps, startedAt: number): void {
  const modelObject = (id: string): Record<string, unknown> => {
    const base = { id, object: "model", created: startedAt, owned_by: "local-ai" };
    const modelName = deps.agents[id];
    if (deps.models === undefined || modelName === undefined) return base;
    const description = deps.models.describe(modelName);
    return { ...base, context_length: description.contextLength, engine: description.engine, capabilities: description.capabilities };
  };
  app.get("/v1/models", (c) => c.json({ object: "list", data: Object.keys(deps.agents).map(modelObject) }));
  app.get("/v1/models/:id{.+}", (c) => {
    const id = c.req.param("id");
    if (!Object.hasOwn(deps.agents, id)) {
      throw new HttpError("model_not_found", `The model ${JSON.stringify(id)} does not exist. Configured agents: ${Object.keys(deps.agents).join(", ") || "none"}`, "model");
    }
    return c.json(modelObject(id));
  });
}
