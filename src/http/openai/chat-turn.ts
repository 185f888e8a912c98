import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import type { Logger } from "pino";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { assertSafeId } from "../../shared/safe-id.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { HttpDeps } from "../http-deps.js";
import type { ModelResolver } from "../resolve-model.js";
import { requestKeyScope } from "../request/request-key.js";
import { requestLogger } from "../request/request-record.js";
import { resolveTurnTarget, type TurnTarget } from "../turn/resolve-turn-target.js";
import { scopedRunner } from "../turn/scoped-runner.js";
import type { SessionGate } from "../turn/session-gate.js";
import type { RunTurn } from "../sse/turn-stream.js";
import { assertSupported, ignoredFieldWarnings, toClientTools, toConversation, toOverrides, userIdFor } from "./request-mapping.js";
import { lastUserInput, parseChatRequest, type ChatRequest } from "./request-schema.js";

/** Runs the turn with this event sink; resolves with its outcome (the request's ignored fields among its warnings). */
export type StartTurn = RunTurn;

/** A chat request resolved into the turn to run; nothing has started yet but the session gate. */
export interface ChatTurn {
  body: ChatRequest;
  /** Who answers; its `id` (the name the client asked for) is echoed as `model`. */
  target: TurnTarget;
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
  const target = await resolveTurnTarget(c, deps, resolver, body.model);
  const { agent, onModel: model } = target;
  const ignored = [...ignoredFieldWarnings(raw), ...target.warnings];
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
    return { body, target, start, release: () => undefined, log };
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
  return { body, target, start, release, log: log.child({ session_id: sessionId, user_id: userId }) };
}

function withWarnings(outcome: TurnOutcome, extra: readonly string[]): TurnOutcome {
  return extra.length === 0 ? outcome : { ...outcome, warnings: [...outcome.warnings, ...extra] };
}
