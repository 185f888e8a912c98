import type { Hono } from "hono";
import type { HttpDeps } from "../http-deps.js";
import type { InFlightWork } from "../in-flight-work.js";
import { HttpError } from "../openai/errors.js";
import { readJson } from "../read-json.js";
import { requestAbort } from "../request-abort.js";
import { countInputTokens } from "./input-tokens.js";
import { newIdentity } from "./response-object.js";
import { runResponse } from "./response-run.js";
import { resolveResponseTurn } from "./response-turn.js";
import { parseResponsesRequest } from "./responses-schema.js";
import { registerStoredResponseRoutes } from "./stored-response-routes.js";

/**
 * POST /v1/responses (OpenAI's Responses API): one agent turn whose conversation is the request's
 * input, after the stored conversation of `previous_response_id` when one is named. Always a
 * client-kept turn (runStateless): the store here is the Responses store, not a session.
 */
export function registerResponsesRoutes(app: Hono, deps: HttpDeps, inFlight: InFlightWork): void {
  app.post("/v1/responses", async (c) => {
    const raw = await readJson(c);
    const request = parseResponsesRequest(raw);
    const agent = resolveAgent(deps, request.model);
    const modelName = deps.agents[agent] ?? "";
    const images = deps.models?.describe(modelName).capabilities.vision ?? false;
    const store = request.store === false ? undefined : deps.responseStore;
    const turn = await resolveResponseTurn(raw, request, { store: deps.responseStore, images });
    const identity = newIdentity(agent, request, request.store !== false);
    const cacheKey = turn.cacheKey ?? `responses/${identity.id}`;
    const runner = deps.runner();
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    const leave = inFlight.enter();
    const log = deps.logger.child({ agent, response_id: identity.id });
    return runResponse({
      run: (options) =>
        runner.runStateless(
          {
            agent,
            messages: turn.messages,
            ...(turn.clientTools === undefined ? {} : { clientTools: turn.clientTools }),
            overrides: turn.overrides,
            // Without a store or a key there is no later request to keep the cache warm for.
            ...(store === undefined && turn.cacheKey === undefined ? {} : { cacheKey }),
            truncation: request.truncation ?? "disabled",
          },
          options,
        ),
      turn,
      identity,
      store,
      cacheKey,
      controller: abort.controller,
      release: () => {
        leave();
        abort.dispose();
      },
      degradationTier: () => deps.health().engines[modelName]?.degradationTier ?? "NORMAL",
      logger: log,
      stream:
        request.stream === true
          ? { keepAliveMs: deps.settings.keepAliveMs ?? 10_000, coalesceMs: deps.settings.coalesceMs ?? 0, maxPendingBytes: deps.settings.maxPendingStreamBytes ?? 8 * 1024 * 1024 }
          : null,
    });
  });

  app.post("/v1/responses/input_tokens", async (c) => {
    const raw = await readJson(c);
    const request = parseResponsesRequest({ ...(raw as object), stream: false, store: false });
    const agent = resolveAgent(deps, request.model);
    const modelName = deps.agents[agent] ?? "";
    if (deps.models === undefined) throw new HttpError("not_found", "Token counts need the configured models", "model");
    const turn = await resolveResponseTurn(raw, request, { store: deps.responseStore, images: deps.models.describe(modelName).capabilities.vision });
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    try {
      const engine = await deps.models.engine(modelName);
      const inputTokens = await countInputTokens(engine, turn.messages, turn.clientTools ?? [], abort.controller.signal);
      return c.json({ object: "response.input_tokens", input_tokens: inputTokens });
    } finally {
      abort.dispose();
    }
  });

  registerStoredResponseRoutes(app, deps);
}

/** `model`: an agent name; missing: the default agent; anything else a 404 naming the field. */
function resolveAgent(deps: HttpDeps, model: string | undefined): string {
  const names = Object.keys(deps.agents);
  const agent = model ?? names[0];
  if (agent === undefined || !Object.hasOwn(deps.agents, agent)) {
    throw new HttpError("model_not_found", `The model ${JSON.stringify(model ?? "")} does not exist. Configured agents: ${names.join(", ") || "none"}`, "model");
  }
  return agent;
}
