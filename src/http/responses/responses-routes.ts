import type { Hono } from "hono";
import type { McpClientFactory } from "../http-deps.js";
import { requestLogger, requestRecord } from "../request/request-record.js";
import { scopedRunner } from "../turn/scoped-runner.js";
import { HttpError } from "../http-error.js";
import { readJson } from "../request/read-json.js";
import { requestKeyScope } from "../request/request-key.js";
import { requestAbort } from "../request/request-abort.js";
import { resolveTurnTarget } from "../turn/resolve-turn-target.js";
import { openAiErrorShape } from "../responder/error-shape.js";
import type { DialectRoutes, HttpDialect } from "../responder/http-dialect.js";
import { respondToTurn } from "../responder/turn-responder.js";
import { newIdentity } from "./response-object.js";
import { responseReader } from "./response-reader.js";
import { ResponseStore } from "./response-store.js";
import { responsesResponder } from "./responses-responder.js";
import { resolveResponseTurn, type ResponseTurn } from "./response-turn.js";
import { RequestMcpTools } from "./request-mcp-tools.js";
import { parseResponsesRequest } from "./responses-schema.js";
import { registerStoredResponseRoutes } from "./stored-response-routes.js";

/**
 * POST /v1/responses (OpenAI's Responses API): one agent turn whose conversation is the request's
 * input, after the stored conversation of `previous_response_id` when one is named. Always a
 * client-kept turn (runStateless): the store here is the Responses store, not a session.
 */
function registerResponsesRoutes(app: Hono, routes: DialectRoutes): void {
  const { deps, resolver } = routes;
  const { settings } = deps;
  const responseStore = settings.responses === undefined ? undefined : new ResponseStore(settings.responses, deps.logger);
  app.post("/v1/responses", async (c) => {
    const raw = await readJson(c);
    const request = parseResponsesRequest(raw);
    // The response echoes the name the client sent (Codex checks it).
    const target = await resolveTurnTarget(c, deps, resolver, request.model);
    const { agent } = target;
    const store = request.store === false ? undefined : responseStore;
    const reader = responseReader(c);
    const turn = await resolveResponseTurn(raw, request, { store: responseStore, reader, images: target.vision(), allowMcp: deps.mcpClient !== undefined });
    turn.warnings.unshift(...target.warnings);
    const mcp = requestMcpTools(turn, deps.mcpClient);
    const identity = { ...newIdentity(target.id, request, request.store !== false), requestId: requestRecord(c)?.id };
    const cacheKey = turn.cacheKey ?? `responses/${identity.id}`;
    const runner = scopedRunner(c, deps.runner());
    const log = requestLogger(c, deps.logger).child({ agent, response_id: identity.id });
    const responder = responsesResponder({
      run: (options) =>
        runner.runStateless(
          {
            agent,
            ...target.onModel,
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
      degradationTier: target.degradationTier,
      mcp,
    });
    return respondToTurn(c, routes, { stream: request.stream === true, responder, logger: log });
  });

  app.post("/v1/responses/input_tokens", async (c) => {
    const raw = await readJson(c);
    const request = parseResponsesRequest({ ...(raw as object), stream: false, store: false });
    const target = await resolveTurnTarget(c, deps, resolver, request.model);
    const runner = scopedRunner(c, deps.runner());
    if (deps.models === undefined || runner.countPromptTokens === undefined) throw new HttpError("not_found", "Token counts need the configured models", "model");
    // MCP servers are not connected to count tokens: their tools are not counted.
    const turn = await resolveResponseTurn(raw, request, { store: responseStore, reader: responseReader(c), images: target.vision(), allowMcp: deps.mcpClient !== undefined });
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    try {
      // The prompt the turn's first step would evaluate: the agent's system prompt, the
      // conversation and the tools, rendered by the model's chat template (as count_tokens).
      const inputTokens = await runner.countPromptTokens(
        { agent: target.agent, ...target.onModel, messages: turn.messages, ...(turn.clientTools === undefined ? {} : { clientTools: turn.clientTools }), overrides: turn.overrides },
        abort.controller.signal,
      );
      return c.json({ object: "response.input_tokens", input_tokens: inputTokens });
    } finally {
      abort.dispose();
    }
  });

  registerStoredResponseRoutes(app, responseStore);
}

/** The request's MCP servers as the turn's tools (nothing connects until the turn starts). */
function requestMcpTools(turn: ResponseTurn, factory: McpClientFactory | undefined): RequestMcpTools | null {
  if (turn.mcpServers.length === 0 || factory === undefined) return null;
  const client = factory(Object.fromEntries(turn.mcpServers.map((server) => [server.label, server.config])));
  return new RequestMcpTools(turn.mcpServers, client, new Set((turn.clientTools ?? []).map((tool) => tool.name)));
}

export const responsesDialect: HttpDialect = { paths: ["/v1/responses/*"], errorShape: openAiErrorShape, register: registerResponsesRoutes };
