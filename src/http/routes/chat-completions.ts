import { randomBytes } from "node:crypto";
import type { Hono } from "hono";
import type { EmitEvent } from "../../agent/events.js";
import { assertSafeId } from "../../shared/safe-id.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { HttpDeps } from "../http-deps.js";
import { readJson } from "../read-json.js";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { completionObject, type CompletionIdentity } from "../openai/completion.js";
import type { InFlightWork } from "../in-flight-work.js";
import { HttpError } from "../openai/errors.js";
import { assertSupported, ignoredFieldWarnings, toClientTools, toConversation, toOverrides, userIdFor } from "../openai/request-mapping.js";
import { lastUserInput, parseChatRequest } from "../openai/request-schema.js";
import type { SessionGate } from "../session-gate.js";
import { streamTurn } from "./chat-stream.js";

/** Runs the turn with this event sink; resolves with its outcome in the mode's terms. */
export type StartTurn = (options: { signal: AbortSignal; emit: EmitEvent }) => Promise<TurnOutcome>;

/**
 * POST /v1/chat/completions: one agent turn as OpenAI JSON or SSE. A request that names a session
 * (`session_id`, or the header `X-Session-Id`) gets seed 001's behaviour: the last user message is
 * the input, history comes from the store. One that names none is a conversation kept by the
 * client, as every OpenAI client sends it: its messages are the whole context and nothing is stored.
 */
export function registerChatRoute(app: Hono, deps: HttpDeps, gate: SessionGate, inFlight: InFlightWork): void {
  const agentNames = Object.keys(deps.agents);
  app.post("/v1/chat/completions", async (c) => {
    const raw = await readJson(c);
    const body = parseChatRequest(raw);
    assertSupported(body);
    const agent = body.model ?? agentNames[0];
    if (agent === undefined || !(agent in deps.agents)) {
      throw new HttpError("model_not_found", `The model ${JSON.stringify(body.model ?? "")} does not exist. Configured agents: ${agentNames.join(", ") || "none"}`, "model");
    }
    const ignored = ignoredFieldWarnings(raw);
    const overrides = toOverrides(body);
    const clientTools = toClientTools(body);
    const named = body.session_id ?? c.req.header("x-session-id");
    const runner = deps.runner();
    let start: StartTurn;
    let release = (): void => undefined;
    let log = deps.logger.child({ agent });
    if (named === undefined) {
      if (body.resume === true) throw new RuntimeError("invalid_request", "resume needs the session_id of the turn to resume", { details: { param: "resume" } });
      const messages = toConversation(body.messages);
      start = async (options) =>
        withWarnings(await runner.runStateless({ agent, messages, ...(clientTools ? { clientTools } : {}), overrides, approve_execution: body.approve_execution === true }, options), ignored);
    } else {
      if (clientTools !== undefined) {
        throw new RuntimeError("invalid_request", "tools: functions the client runs need a conversation kept by the client; omit session_id (and X-Session-Id) to use them", { details: { param: "tools" } });
      }
      // Validated here (not only in the runner) so the session gate's key is a safe id too.
      const userId = assertSafeId("user_id", userIdFor(body.user));
      const sessionId = assertSafeId("session_id", named === "" ? randomBytes(4).toString("hex") : named);
      const input = lastUserInput(body);
      release = gate.enter(userId, sessionId);
      log = log.child({ session_id: sessionId, user_id: userId });
      start = async (options) =>
        withWarnings(await runner.runTurn({ user_id: userId, session_id: sessionId, agent, input, resume: body.resume, approve_execution: body.approve_execution, overrides }, options), ignored);
    }
    // One signal for the turn: the client's connection closing, or the server shutting down.
    const controller = new AbortController();
    const abort = (): void => controller.abort("client disconnected");
    c.req.raw.signal.addEventListener("abort", abort, { once: true });
    const onShutdown = (): void => controller.abort("server shutting down");
    deps.shutdownSignal?.addEventListener("abort", onShutdown, { once: true });
    const leave = inFlight.enter();
    const cleanup = (): void => {
      leave();
      release();
      c.req.raw.signal.removeEventListener("abort", abort);
      deps.shutdownSignal?.removeEventListener("abort", onShutdown);
    };
    const identity: CompletionIdentity = { id: "chatcmpl-pending", created: Math.floor(Date.now() / 1000), model: agent };
    const tier = (): string => deps.health().engines[deps.agents[agent] ?? ""]?.degradationTier ?? "NORMAL";
    if (body.stream === true) {
      const events = body.events === true || c.req.header("x-local-ai-events") === "1";
      return streamTurn({
        start, identity, events, controller, release: cleanup, logger: log, degradationTier: tier,
        includeUsage: body.stream_options?.include_usage === true,
        keepAliveMs: deps.settings.keepAliveMs ?? 10_000,
        coalesceMs: deps.settings.coalesceMs ?? 0,
        maxPendingBytes: deps.settings.maxPendingStreamBytes ?? 8 * 1024 * 1024,
      });
    }
    try {
      const outcome = await start({ signal: controller.signal, emit: () => undefined });
      identity.id = `chatcmpl-${outcome.trace_id}`;
      return c.json(completionObject(identity, outcome, tier()));
    } finally {
      cleanup();
    }
  });
}

function withWarnings(outcome: TurnOutcome, extra: readonly string[]): TurnOutcome {
  return extra.length === 0 ? outcome : { ...outcome, warnings: [...outcome.warnings, ...extra] };
}
