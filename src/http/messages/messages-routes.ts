import { createHash } from "node:crypto";
import type { Context, Hono } from "hono";
import type { StatelessTurnRequest } from "../../agent/stateless-turn.js";
import { HttpError } from "../http-error.js";
import type { HttpDeps } from "../http-deps.js";
import { readJson } from "../request/read-json.js";
import { requestKeyScope } from "../request/request-key.js";
import { requestAbort } from "../request/request-abort.js";
import type { ModelResolver } from "../resolve-model.js";
import { requestLogger, requestRecord } from "../request/request-record.js";
import { resolveTurnTarget, type TurnTarget } from "../turn/resolve-turn-target.js";
import type { DialectRoutes, HttpDialect } from "../responder/http-dialect.js";
import { respondToTurn } from "../responder/turn-responder.js";
import { scopedRunner } from "../turn/scoped-runner.js";
import { anthropicErrorShape } from "./anthropic-error.js";
import type { ThinkingDisplay } from "./message-builder.js";
import { newMessageId } from "./message-object.js";
import { messagesResponder } from "./messages-responder.js";
import { toConversation } from "./messages-content.js";
import { parseMessagesRequest, unreadFieldWarnings, type MessagesRequest } from "./messages-schema.js";
import { toClientTools, toOverrides } from "./messages-tools.js";

interface ResolvedTurn {
  target: TurnTarget;
  request: MessagesRequest;
  turn: Omit<StatelessTurnRequest, "agent">;
  warnings: string[];
}

/**
 * POST /v1/messages (Anthropic's Messages API; Claude Code adds `?beta=true`) and
 * /v1/messages/count_tokens. Always a client-kept turn (runStateless): the client resends the
 * whole conversation each step. The KV cache follows the conversation: by
 * `x-claude-code-session-id` where the client sends it, else the engine's longest matching prefix.
 */
function registerMessagesRoutes(app: Hono, routes: DialectRoutes): void {
  const { deps, resolver } = routes;
  app.post("/v1/messages", async (c) => {
    const resolved = await resolve(c, deps, resolver, await readJson(c));
    const { target, request } = resolved;
    const { agent } = target;
    const runner = scopedRunner(c, deps.runner());
    const identity = { id: newMessageId(), model: request.model, requestId: requestRecord(c)?.id };
    const userId = request.metadata?.user_id ?? undefined;
    const logger = requestLogger(c, deps.logger).child({ agent, message_id: identity.id, ...(userId === undefined ? {} : { user_id: userId.slice(0, 200) }) });
    const responder = messagesResponder({
      run: (options) => runner.runStateless({ agent, ...resolved.turn }, { ...options, toolScope: requestKeyScope(c).toolScope }),
      identity,
      thinking: thinkingDisplay(request),
      warnings: resolved.warnings,
      degradationTier: target.degradationTier,
    });
    return respondToTurn(c, routes, { stream: request.stream === true, responder, logger });
  });

  app.post("/v1/messages/count_tokens", async (c) => {
    const raw = await readJson(c);
    // count_tokens takes no max_tokens: the count is of the prompt alone.
    const { target, turn } = await resolve(c, deps, resolver, { max_tokens: 1, ...(raw as object) });
    const runner = scopedRunner(c, deps.runner());
    if (runner.countPromptTokens === undefined) throw new HttpError("not_found", "Token counts are not available on this server", "model");
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    try {
      return c.json({ input_tokens: await runner.countPromptTokens({ agent: target.agent, ...turn }, abort.controller.signal) });
    } finally {
      abort.dispose();
    }
  });
}

async function resolve(c: Context, deps: HttpDeps, resolver: ModelResolver, raw: unknown): Promise<ResolvedTurn> {
  const request = parseMessagesRequest(raw);
  requestLogger(c, deps.logger).debug({ anthropic_version: c.req.header("anthropic-version"), anthropic_beta: c.req.header("anthropic-beta") }, "messages request");
  // Claude Code sends its own model names (claude-opus-..., claude-haiku-...): http.model_aliases maps them.
  const target = await resolveTurnTarget(c, deps, resolver, request.model);
  const warnings = [...unreadFieldWarnings(raw), ...target.warnings];
  const messages = toConversation(request, { images: target.vision() });
  const tools = toClientTools(request);
  const { overrides, warnings: overrideWarnings } = toOverrides(request, tools);
  warnings.push(...tools.warnings, ...overrideWarnings);
  const session = c.req.header("x-claude-code-session-id");
  const cacheKey = session === undefined || session === "" ? undefined : `messages/${createHash("sha256").update(session).digest("hex").slice(0, 32)}`;
  const turn: Omit<StatelessTurnRequest, "agent"> = {
    ...target.onModel,
    messages,
    ...(tools.specs === undefined ? {} : { clientTools: tools.specs }),
    overrides,
    ...(cacheKey === undefined ? {} : { cacheKey }),
    truncation: "disabled",
    ...(request.keep_alive === undefined ? {} : { keep_alive: request.keep_alive }),
  };
  return { target, request, turn, warnings };
}

/** `thinking.type: "disabled"` drops the thinking blocks (the model may still think: no engine has a switch). */
function thinkingDisplay(request: MessagesRequest): ThinkingDisplay {
  if (request.thinking?.type === "disabled") return "none";
  return request.thinking?.display === "omitted" ? "omitted" : "full";
}

export const messagesDialect: HttpDialect = { paths: ["/v1/messages/*"], errorShape: anthropicErrorShape, register: registerMessagesRoutes };
