import type { Hono } from "hono";
import type { ModelPsEntry } from "../../engine/scheduler/model-ps.js";
import type { HttpDeps } from "../http-deps.js";
import type { ModelResolver } from "../resolve-model.js";
import { requestKeyScope } from "../request/request-key.js";
import { resolveServedModel } from "../turn/resolve-served-model.js";
import { requestRecord } from "../request/request-record.js";

/**
 * GET /v1/models and /v1/models/{id}: agents (not GGUF files) are what a client picks, so they
 * are the "models", with the exact names of http.model_aliases after them (globs name no one
 * model, but /v1/models/{id} answers any name the resolver accepts). Each carries its agent's
 * model's facts as extra fields (clients ignore unknown fields): context_length, engine,
 * capabilities, and the scheduler's view (status, memory, expires_at, pinned, in_flight). Then the
 * downloaded models served on demand (llama.serve_downloaded), by file name, with the same fields.
 * GET /v1/ps: the loaded models themselves (llama.models names), like `ollama ps`.
 * A key limited to some models sees only those (and /v1/ps only the models behind them); naming
 * another in /v1/models/{id} is 403 `permission_denied`, as using it would be.
 */
export function registerModelsRoute(app: Hono, deps: HttpDeps, resolver: ModelResolver, startedAt: number): void {
  const states = async (): Promise<Map<string, ModelPsEntry>> => new Map(deps.models === undefined ? [] : (await deps.models.ps()).models.map((entry) => [entry.name, entry]));
  const modelObject = (id: string, modelName: string | undefined, ps: Map<string, ModelPsEntry>): Record<string, unknown> => {
    const base = { id, object: "model", created: startedAt, owned_by: "local-ai" };
    if (deps.models === undefined || modelName === undefined) return base;
    const description = deps.models.describe(modelName);
    const state = ps.get(modelName);
    return {
      ...base,
      context_length: description.contextLength,
      engine: description.engine,
      capabilities: description.capabilities,
      ...(state === undefined ? {} : { status: state.status, memory: state.memory, expires_at: state.expires_at, pinned: state.pinned, in_flight: state.in_flight }),
    };
  };
  app.get("/v1/models", async (c) => {
    // Listed first: ps() then counts the downloaded models too.
    const downloaded = (await deps.models?.downloaded?.()) ?? [];
    const ps = await states();
    const scope = requestKeyScope(c);
    const listed = resolver.listed();
    const names = new Set(listed.map(({ id }) => id));
    const onDemand = downloaded.filter((name) => !names.has(name) && scope.allowsModel(name));
    return c.json({
      object: "list",
      data: [...listed.filter(({ agent }) => scope.allowsModel(agent)).map(({ id, agent }) => modelObject(id, deps.agents[agent], ps)), ...onDemand.map((name) => modelObject(name, name, ps))],
    });
  });
  app.get("/v1/ps", async (c) => {
    const scope = requestKeyScope(c);
    const usable = (model: string): boolean => scope.allowsModel(model) || Object.entries(deps.agents).some(([agent, served]) => served === model && scope.allowsModel(agent));
    const loaded = [...(await states()).values()].filter((entry) => entry.status === "loaded" && usable(entry.name));
    return c.json({
      object: "list",
      data: loaded.map((entry) => ({
        id: entry.name,
        object: "model",
        owned_by: "local-ai",
        engine: entry.engine,
        ...(deps.models === undefined ? {} : { context_length: deps.models.describe(entry.name).contextLength }),
        status: entry.status,
        memory: entry.memory,
        expires_at: entry.expires_at,
        pinned: entry.pinned,
        in_flight: entry.in_flight,
      })),
    });
  });
  app.get("/v1/models/:id{.+}", async (c) => {
    const resolved = await resolveServedModel(resolver, deps.models, c.req.param("id"), requestRecord(c));
    requestKeyScope(c).assertModel(resolved);
    return c.json(modelObject(resolved.id, resolved.downloaded === true ? resolved.modelName : deps.agents[resolved.agent ?? ""], await states()));
  });
}
