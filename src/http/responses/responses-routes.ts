import type { Context, Hono } from "hono";
import type { HttpDeps, McpClientFactory } from "../http-deps.js";
import type { ModelResolver } from "../resolve-model.js";
import { requestLogger, requestRecord } from "../request-record.js";
import { resolveServedModel } from "../resolve-served-model.js";
import { scopedRunner } from "../scoped-runner.js";
import type { InFlightWork } from "../in-flight-work.js";
import { HttpError } from "../http-error.js";
import { readJson } from "../read-json.js";
import { requestKeyScope } from "../request-key.js";
import { requestAbort } from "../request-abort.js";
import { startRequestWork } from "../request-work.js";
import { newIdentity } from "./response-object.js";
import { responseReader } from "./response-reader.js";
import type { ResponseStore } from "./response-store.js";
import { runResponse } from "./response-run.js";
import { resolveResponseTurn, type ResponseTurn } from "./response-turn.js";
import { RequestMcpTools } from "./request-mcp-tools.js";
import { parseResponsesRequest } from "./responses-schema.js";
import { registerStoredResponseRoutes } from "./stored-response-routes.js";

/**
 * POST /v1/responses (OpenAI's Responses API): one agent turn whose conversation is the request's
 * input, after the stored conversation of `previous_response_id` when one is named. Always a
 * client-kept turn (runStateless): the store here is the Responses store, not a session.
 */
export function registerResponsesRoutes(app: Hono, deps: HttpDeps, resolver: ModelResolver, inFlight: InFlightWork, responseStore: ResponseStore | undefined): void {
  app.post("/v1/responses", async (c) => {
    const raw = await readJson(c);
    const request = parseResponsesRequest(raw);
    const { agent, modelName, id: model, warnings, downloaded } = await resolveAgent(c, resolver, deps, request.model);
    const images = deps.models?.describe(modelName).capabilities.vision ?? false;
    const store = request.store === false ? undefined : responseStore;
    const reader = responseReader(c);
    const turn = await resolveResponseTurn(raw, request, { store: responseStore, reader, images, allowMcp: deps.mcpClient !== undefined });
    turn.warnings.unshift(...warnings);
    const mcp = requestMcpTools(turn, deps.mcpClient);
    const identity = { ...newIdentity(model, request, request.store !== false), requestId: requestRecord(c)?.id };
    const cacheKey = turn.cacheKey ?? `responses/${identity.id}`;
    const runner = scopedRunner(c, deps.runner());
    const log = requestLogger(c, deps.logger).child({ agent, response_id: identity.id });
    const work = startRequestWork({ requestSignal: c.req.raw.signal, shutdownSignal: deps.shutdownSignal, inFlight, logger: log });
    return runResponse({
      run: (options) =>
        runner.runStateless(
          {
            agent,
            ...(downloaded ? { model: modelName } : {}),
            messages: turn.messages,
            ...(turn.clientTools === undefined ? {} : { clientTools: turn.clientTools }),
            ...(mcp === null ? {} : { tools: mcp }),
            // A paused MCP call is answered by this request; the conversation is stored, so a gated call may pause.
            pausable: store !== undefined,
            ...(turn.resume === undefined ? {} : { resumeDecision: turn.resume.decision }),
            overrides: turn.overrides,
            // A stored response may be continued: its conversation keeps a key from the first turn
            // (llama-server's slot, the embedded KV state). Neither stored nor keyed: no key, so
            // nothing is saved for a conversation that cannot be continued.
            ...(store === undefined && turn.cacheKey === undefined ? {} : { cacheKey }),
            truncation: request.truncation ?? "disabled",
            ...(request.keep_alive === undefined ? {} : { keep_alive: request.keep_alive }),
          },
          { ...options, toolScope: requestKeyScope(c).toolScope },
        ),
      turn,
      identity,
      store,
      owner: reader.key,
      cacheKey,
      controller: work.controller,
      release: work.finish,
      degradationTier: () => deps.health().engines[modelName]?.degradationTier ?? "NORMAL",
      logger: log,
      mcp,
      stream:
        request.stream === true
          ? { keepAliveMs: deps.settings.keepAliveMs ?? 10_000, coalesceMs: deps.settings.coalesceMs ?? 0, maxPendingBytes: deps.settings.maxPendingStreamBytes ?? 8 * 1024 * 1024 }
          : null,
    });
  });

  app.post("/v1/responses/input_tokens", async (c) => {
    const raw = await readJson(c);
    const request = parseResponsesRequest({ ...(raw as object), stream: false, store: false });
    const { agent, modelName, downloaded } = await resolveAgent(c, resolver, deps, request.model);
    const runner = scopedRunner(c, deps.runner());
    if (deps.models === undefined || runner.countPromptTokens === undefined) throw new HttpError("not_found", "Token counts need the configured models", "model");
    // MCP servers are not connected to count tokens: their tools are not counted.
    const turn = await resolveResponseTurn(raw, request, { store: responseStore, reader: responseReader(c), images: deps.models.describe(modelName).capabilities.vision, allowMcp: deps.mcpClient !== undefined });
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    try {
      // The prompt the turn's first step would evaluate: the agent's system prompt, the
      // conversation and the tools, rendered by the model's chat template (as count_tokens).
      const inputTokens = await runner.countPromptTokens(
        { agent, ...(downloaded ? { model: modelName } : {}), messages: turn.messages, ...(turn.clientTools === undefined ? {} : { clientTools: turn.clientTools }), overrides: turn.overrides },
        abort.controller.signal,
      );
      return c.json({ object: "response.input_tokens", input_tokens: inputTokens });
    } finally {
      abort.dispose();
    }
  });

  registerStoredResponseRoutes(app, responseStore);
}

/**
 * `model` as every endpoint reads it (agent, alias, a downloaded model, http.unknown_model); the
 * Responses API serves agents (or the default agent on a downloaded model). The response echoes
 * the name the client sent (Codex checks it).
 */
async function resolveAgent(
  c: Context,
  resolver: ModelResolver,
  deps: HttpDeps,
  model: string | undefined,
): Promise<{ agent: string; modelName: string; id: string; warnings: string[]; downloaded: boolean }> {
  const resolved = await resolveServedModel(resolver, deps.models, model, requestRecord(c));
  requestKeyScope(c).assertModel(resolved);
  const agent = resolved.agent ?? "";
  const warnings = resolved.fallback === true ? [`model ${JSON.stringify(resolved.id)} matches no agent or alias: answered by the default agent "${agent}" (http.unknown_model: default)`] : [];
  return { agent, modelName: resolved.modelName, id: resolved.id, warnings, downloaded: resolved.downloaded === true };
}

/** The request's MCP servers as the turn's tools (nothing connects until the turn starts). */
function requestMcpTools(turn: ResponseTurn, factory: McpClientFactory | undefined): RequestMcpTools | null {
  if (turn.mcpServers.length === 0 || factory === undefined) return null;
  const client = factory(Object.fromEntries(turn.mcpServers.map((server) => [server.label, server.config])));
  return new RequestMcpTools(turn.mcpServers, client, new Set((turn.clientTools ?? []).map((tool) => tool.name)));
}
