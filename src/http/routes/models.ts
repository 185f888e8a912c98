import type { Hono } from "hono";
import type { HttpDeps } from "../http-deps.js";
import type { ModelResolver } from "../resolve-model.js";

/**
 * GET /v1/models and /v1/models/{id}: agents (not GGUF files) are what a client picks, so they
 * are the "models", with the exact names of http.model_aliases after them (globs name no one
 * model, but /v1/models/{id} answers any name the resolver accepts). Each carries its agent's
 * model's facts as extra fields (clients ignore unknown fields): context_length, engine and capabilities.
 */
export function registerModelsRoute(app: Hono, deps: HttpDeps, resolver: ModelResolver, startedAt: number): void {
  const modelObject = (id: string, agent: string): Record<string, unknown> => {
    const base = { id, object: "model", created: startedAt, owned_by: "local-ai" };
    const modelName = deps.agents[agent];
    if (deps.models === undefined || modelName === undefined) return base;
    const description = deps.models.describe(modelName);
    return { ...base, context_length: description.contextLength, engine: description.engine, capabilities: description.capabilities };
  };
  app.get("/v1/models", (c) => c.json({ object: "list", data: resolver.listed().map(({ id, agent }) => modelObject(id, agent)) }));
  app.get("/v1/models/:id{.+}", (c) => {
    const { id, agent } = resolver.resolve(c.req.param("id"));
    return c.json(modelObject(id, agent ?? ""));
  });
}
