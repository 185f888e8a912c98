import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import type { Logger } from "pino";
import type { EmitEvent } from "../../agent/events.js";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { assertSafeId } from "../../shared/safe-id.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { HttpDeps } from "../http-deps.js";
import type { ModelResolver } from "../resolve-model.js";
import { requestKeyScope } from "../request-key.js";
import { requestLogger, requestRecord } from "../request-record.js";
import { resolveServedModel } from "../resolve-served-model.js";
import { scopedRunner } from "../scoped-runner.js";
import type { SessionGate } from "../session-gate.js";
import { assertSupported, ignoredFieldWarnings, toClientTools, toConversation, toOverrides, userIdFor } from "./request-mapping.js";
import { lastUserInput, parseChatRequest, type ChatRequest } from "./request-schema.js";

/** Runs the turn with this event sink; resolves with its outcome (the request's ignored fields among its warnings). */
export type StartTurn = (options: { signal: AbortSignal; emit: EmitEvent }) => Promise<TurnOutcome>;

/** A chat request resolved into the turn to run; nothing has started yet but the session gate. */
export interface ChatTurn {
  body: ChatRequest;
  /** The agent that answers. */
  agent: string;
  /** The name the client asked for (an agent, an alias, a downloaded model), echoed as `model`. */
  model: string;
  /** The `llama.models` name that serves it. */
  modelName: string;
  start: StartTurn;
  /** Lets the session go (the gate entered for a session-mode turn); idempotent. */
  release: () => void;
  log: Logger;
}

/**
 * A request that names a session (`session_id`, or the header `X-Session-Id`) gets seed 001's
 * behaviour: the last user message is the input, history comes from the store. One that names none
 * is a conversation kept by the client, as every OpenAI client sends it: its messages are the
 * whole context and nothing is stored. Every refusal is thrown here, before any work starts.
 */
/** The request's key (its models are checked here, its tools go down with the turn) is read from `c`. */
export async function resolveChatTurn(c: Context, raw: unknown, deps: HttpDeps, resolver: ModelResolver, gate: SessionGate): Promise<ChatTurn> {
  const body = parseChatRequest(raw);
  assertSupported(body);
  const scope = requestKeyScope(c);
  const sessionHeader = c.req.header("x-session-id");
  const resolved = await resolveServedModel(resolver, deps.models, body.model, requestRecord(c));
  scope.assertModel(resolved);
  // A downloaded model served on demand: the default agent's turn, on that model.
  const model = resolved.downloaded === true ? { model: resolved.modelName } : {};
  // Chat names agents only (no llama.models names), so there is always one.
  const agent = resolved.agent ?? "";
  const ignored = ignoredFieldWarnings(raw);
  if (resolved.fallback === true) ignored.push(`model ${JSON.stringify(resolved.id)} matches no agent or alias: answered by the default agent "${agent}" (http.unknown_model: default)`);
  const overrides = toOverrides(body);
  const clientTools = toClientTools(body);
  const named = body.session_id ?? sessionHeader;
  const runner = scopedRunner(c, deps.runner());
  const log = requestLogger(c, deps.logger).child({ agent });
  if (named === undefined) {
    if (body.resume === true) throw new RuntimeError("invalid_request", "resume needs the session_id of the turn to resume", { details: { param: "resume" } });
    const messages = toConversation(body.messages);
    const start: StartTurn = async (options) =>
      withWarnings(await runner.runStateless({ agent, ...model, messages, ...(clientTools ? { clientTools } : {}), overrides, approve_execution: body.approve_execution === true, ...(body.keep_alive === undefined ? {} : { keep_alive: body.keep_alive }) }, { ...options, toolScope: scope.toolScope }), ignored);
    return { body, agent, model: resolved.id, modelName: resolved.modelName, start, release: () => undefined, log };
  }
  if (clientTools !== undefined) {
    throw new RuntimeError("invalid_request", "tools: functions the client runs need a conversation kept by the client; omit session_id (and X-Session-Id) to use them", { details: { param: "tools" } });
  }
  // Validated here (not only in the runner) so the session gate's key is a safe id too.
  const userId = assertSafeId("user_id", userIdFor(body.user));
  const sessionId = assertSafeId("session_id", named === "" ? randomBytes(4).toString("hex") : named);
  const input = lastUserInput(body);
  const release = gate.enter(userId, sessionId);
  const start: StartTurn = async (options) =>
    withWarnings(await runner.runTurn({ user_id: userId, session_id: sessionId, agent, ...model, input, resume: body.resume, approve_execution: body.approve_execution, ...(body.elicitation === undefined ? {} : { elicitation: body.elicitation }), overrides, keep_alive: body.keep_alive }, { ...options, toolScope: scope.toolScope, pauseForElicitation: true }), ignored);
  return { body, agent, model: resolved.id, modelName: resolved.modelName, start, release, log: log.child({ session_id: sessionId, user_id: userId }) };
}

function withWarnings(outcome: TurnOutcome, extra: readonly string[]): TurnOutcome {
  return extra.length === 0 ? outcome : { ...outcome, warnings: [...outcome.warnings, ...extra] };
}
