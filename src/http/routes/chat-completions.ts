import { randomBytes } from "node:crypto";
import type { Context, Hono } from "hono";
import type { TurnRequest } from "../../agent/session-runner.js";
import { assertSafeId } from "../../shared/safe-id.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { HttpDeps } from "../http-deps.js";
import { completionObject, UsageTally, type CompletionIdentity } from "../openai/completion.js";
import { HttpError } from "../openai/errors.js";
import { lastUserInput, parseChatRequest } from "../openai/request-schema.js";
import type { SessionGate } from "../session-gate.js";
import { streamTurn } from "./chat-stream.js";

/** POST /v1/chat/completions: one agent turn through the SessionRunner, as OpenAI JSON or SSE. */
export function registerChatRoute(app: Hono, deps: HttpDeps, gate: SessionGate): void {
  const agentNames = Object.keys(deps.agents);
  app.post("/v1/chat/completions", async (c) => {
    const body = parseChatRequest(await readJson(c));
    const agent = body.model ?? agentNames[0];
    if (agent === undefined || !(agent in deps.agents)) {
      throw new HttpError("model_not_found", `The model ${JSON.stringify(body.model ?? "")} does not exist. Configured agents: ${agentNames.join(", ") || "none"}`, "model");
    }
    // Validated here (not only in the runner) so the session gate's key is a safe id too.
    const userId = assertSafeId("user_id", body.user ?? "default_user");
    const sessionId = assertSafeId("session_id", body.session_id ?? randomBytes(4).toString("hex"));
    const input = lastUserInput(body);
    const request: TurnRequest = { user_id: userId, session_id: sessionId, agent, input, resume: body.resume, approve_execution: body.approve_execution };
    const release = gate.enter(userId, sessionId);
    // One signal for the turn: the client's connection closing, or the server shutting down.
    const controller = new AbortController();
    const abort = (): void => controller.abort("client disconnected");
    c.req.raw.signal.addEventListener("abort", abort, { once: true });
    const onShutdown = (): void => controller.abort("server shutting down");
    deps.shutdownSignal?.addEventListener("abort", onShutdown, { once: true });
    const cleanup = (): void => {
      release();
      c.req.raw.signal.removeEventListener("abort", abort);
      deps.shutdownSignal?.removeEventListener("abort", onShutdown);
    };
    const identity: CompletionIdentity = { id: "chatcmpl-pending", created: Math.floor(Date.now() / 1000), model: agent };
    const tier = (): string => deps.health().engines[deps.agents[agent] ?? ""]?.degradationTier ?? "NORMAL";
    const log = deps.logger.child({ session_id: sessionId, user_id: userId, agent });
    const runner = deps.runner();
    if (body.stream === true) {
      const events = body.events === true || c.req.header("x-local-ai-events") === "1";
      return streamTurn({
        runner, request, identity, events, controller, release: cleanup, logger: log, degradationTier: tier,
        includeUsage: body.stream_options?.include_usage === true,
        keepAliveMs: deps.settings.keepAliveMs ?? 10_000,
        maxPendingBytes: deps.settings.maxPendingStreamBytes ?? 8 * 1024 * 1024,
      });
    }
    const usage = new UsageTally();
    try {
      const result = await runner.runTurn(request, {
        signal: controller.signal,
        emit: (event) => {
          if (event.event === "usage") usage.add(event.input_tokens, event.output_tokens);
        },
      });
      identity.id = `chatcmpl-${result.trace_id}`;
      return c.json(completionObject(identity, result, usage.toJSON(), tier()));
    } finally {
      cleanup();
    }
  });
}

/** The body as JSON; anything unparsable is `invalid_json` (400), never a 500. */
async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RuntimeError("invalid_json", "The request body is not valid JSON");
  }
}
