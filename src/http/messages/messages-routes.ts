import { createHash } from "node:crypto";
import type { Context, Hono } from "hono";
import type { StatelessTurnRequest } from "../../agent/stateless-turn.js";
import { HttpError } from "../http-error.js";
import type { HttpDeps } from "../http-deps.js";
import type { InFlightWork } from "../in-flight-work.js";
import { readJson } from "../read-json.js";
import { requestKeyScope } from "../request-key.js";
import { requestAbort } from "../request-abort.js";
import { startRequestWork } from "../request-work.js";
import type { ModelResolver } from "../resolve-model.js";
import { requestLogger, requestRecord } from "../request-record.js";
import { resolveServedModel } from "../resolve-served-model.js";
import { scopedRunner } from "../scoped-runner.js";
import type { ThinkingDisplay } from "./message-builder.js";
import { newMessageId } from "./message-object.js";
import { runMessage } from "./message-run.js";
import { toConversation } from "./messages-content.js";
import { parseMessagesRequest, unreadFieldWarnings, type MessagesRequest } from "./messages-schema.js";
import { toClientTools, toOverrides } from "./messages-tools.js";

interface ResolvedTurn {
  agent: string;
  modelName: string;
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
export function registerMessagesRoutes(app: Hono, deps: HttpDeps, resolver: ModelResolver, inFlight: InFlightWork): void {
  app.post("/v1/messages", async (c) => {
    const resolved = await resolve(c, deps, resolver, await readJson(c));
    const { agent, modelName, request } = resolved;
    const runner = scopedRunner(c, deps.runner());
    const identity = { id: newMessageId(), model: request.model, requestId: requestRecord(c)?.id };
    const userId = request.metadata?.user_id ?? undefined;
    const logger = requestLogger(c, deps.logger).child({ agent, message_id: identity.id, ...(userId === undefined ? {} : { user_id: userId.slice(0, 200) }) });
    const work = startRequestWork({ requestSignal: c.req.raw.signal, shutdownSignal: deps.shutdownSignal, inFlight, logger });
    return runMessage({
      run: (options) => runner.runStateless({ agent, ...resolved.turn }, { ...options, toolScope: requestKeyScope(c).toolScope }),
      identity,
      thinking: thinkingDisplay(request),
      warnings: resolved.warnings,
      controller: work.controller,
      release: work.finish,
      degradationTier: () => deps.health().engines[modelName]?.degradationTier ?? "NORMAL",
      logger,
      stream:
        request.stream === true
          ? { keepAliveMs: deps.settings.keepAliveMs ?? 10_000, coalesceMs: deps.settings.coalesceMs ?? 0, maxPendingBytes: deps.settings.maxPendingStreamBytes ?? 8 * 1024 * 1024 }
          : null,
    });
  });

  app.post("/v1/messages/count_tokens", async (c) => {
    const raw = await readJson(c);
    // count_tokens takes no max_tokens: the count is of the prompt alone.
    const { agent, turn } = await resolve(c, deps, resolver, { max_tokens: 1, ...(raw as object) });
    const runner = scopedRunner(c, deps.runner());
    if (runner.countPromptTokens === undefined) throw new HttpError("not_found", "Token counts are not available on this server", "model");
    const abort = requestAbort(c.req.raw.signal, deps.shutdownSignal);
    try {
      return c.json({ input_tokens: await runner.countPromptTokens({ agent, ...turn }, abort.controller.signal) });
    } finally {
      abort.dispose();
    }
  });
}

async function resolve(c: Context, deps: HttpDeps, resolver: ModelResolver, raw: unknown): Promise<ResolvedTurn> {
  const request = parseMessagesRequest(raw);
  requestLogger(c, deps.logger).debug({ anthropic_version: c.req.header("anthropic-version"), anthropic_beta: c.req.header("anthropic-beta") }, "messages request");
  // Claude Code sends its own model names (claude-opus-..., claude-haiku-...): http.model_aliases maps them.
  const resolved = await resolveServedModel(resolver, deps.models, request.model, requestRecord(c));
  requestKeyScope(c).assertModel(resolved);
  const agent = resolved.agent ?? "";
  const modelName = resolved.modelName;
  const images = deps.models?.describe(modelName).capabilities.vision ?? false;
  const warnings = unreadFieldWarnings(raw);
  if (resolved.fallback === true) warnings.push(`model ${JSON.stringify(resolved.id.slice(0, 200))} matches no agent or alias: answered by the default agent "${agent}" (http.unknown_model: default)`);
  const messages = toConversation(request, { images });
  const tools = toClientTools(request);
  const { overrides, warnings: overrideWarnings } = toOverrides(request, tools);
  warnings.push(...tools.warnings, ...overrideWarnings);
  const session = c.req.header("x-claude-code-session-id");
  const cacheKey = session === undefined || session === "" ? undefined : `messages/${createHash("sha256").update(session).digest("hex").slice(0, 32)}`;
  const turn: Omit<StatelessTurnRequest, "agent"> = {
    // A downloaded model served on demand: the default agent's turn, on that model.
    ...(resolved.downloaded === true ? { model: modelName } : {}),
    messages,
    ...(tools.specs === undefined ? {} : { clientTools: tools.specs }),
    overrides,
    ...(cacheKey === undefined ? {} : { cacheKey }),
    truncation: "disabled",
    ...(request.keep_alive === undefined ? {} : { keep_alive: request.keep_alive }),
  };
  return { agent, modelName, request, turn, warnings };
}

/** `thinking.type: "disabled"` drops the thinking blocks (the model may still think: no engine has a switch). */
function thinkingDisplay(request: MessagesRequest): ThinkingDisplay {
  if (request.thinking?.type === "disabled") return "none";
  return request.thinking?.display === "omitted" ? "omitted" : "full";
}
