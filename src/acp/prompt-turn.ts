import { RequestError, type PromptRequest, type PromptResponse, type StopReason } from "@agentclientprotocol/sdk";
import { withCoalescedEmit } from "../agent/delta-coalescer.js";
import type { TurnOutcome } from "../agent/turn-outcome.js";
import { ACP_USER, type AcpConnectionState } from "./acp-connection-state.js";
import { canElicit, elicitationAsker } from "./acp-elicitation.js";
import type { AcpCore } from "./acp-deps.js";
import { permissionAsker } from "./acp-permission.js";
import type { AcpSession } from "./acp-session.js";
import { AcpTurnUpdates } from "./acp-updates.js";
import { promptCommandOf, advertisePrompts } from "./prompt-commands.js";
import { promptInput, titleOf } from "./prompt-input.js";
import { storedChoice } from "./session-config.js";
import { currentOptions, fallBackAfterFailure } from "./session-config-request.js";

/**
 * `session/prompt`: one SessionRunner turn on the session's tools, its events streamed as
 * `session/update`s (text merged within stdio.coalesce_ms), gated tools asked through
 * `session/request_permission`. Every update is written before the answer. A cancel (the
 * session's `session/cancel`, `$/cancel_request` or a close) answers `cancelled`.
 */
export async function runPrompt(state: AcpConnectionState, params: PromptRequest, requestSignal: AbortSignal): Promise<PromptResponse> {
  const session = state.sessions.get(params.sessionId);
  if (session.busy) throw RequestError.invalidRequest({ sessionId: session.id, code: "busy" }, "a prompt is already running in this session; cancel it or wait for its answer");
  const command = promptCommandOf(params.prompt, session);
  const input = command === null ? promptInput(params.prompt) : undefined;
  const log = state.logger.child({ session_id: session.id });
  // Running from here, before any wait: a session/cancel that arrives meanwhile is not lost.
  const controller = session.beginPrompt();
  const onRequestCancel = (): void => controller.abort("request cancelled");
  requestSignal.addEventListener("abort", onRequestCancel, { once: true });
  try {
    const core = await state.deps.core();
    // A config server that needs a login: the editor gets the URL now (the turn does not wait).
    void state.logins.offer(core.mcpLogins, session);
    // What the editor chose (set_config_option) when the prompt started; a later change waits for the next one.
    const offered = await currentOptions(state, core, session);
    const { choice, runsOn } = offered;
    // Thinking off: asked of the engine where it has a switch, and never shown either way.
    const hideThinking = offered.thinks && !choice.thinking;
    const updates = new AcpTurnUpdates(session.cwd, () => (runsOn === null ? 0 : core.contextSize(runsOn)), takesNotices(state), !hideThinking);
    const turnChoice = {
      ...(choice.agent === null ? {} : { agent: choice.agent }),
      ...(choice.model === null ? {} : { model: choice.model }),
      ...(hideThinking && runsOn !== null && core.models.canStopThinking(runsOn) ? { overrides: { reasoningEffort: "none" as const } } : {}),
    };
    const result = await withCoalescedEmit(
      (event) => {
        for (const update of updates.map(event)) session.updates.send(update);
        // A server that changed its tools may have changed its prompts too: the commands follow now.
        if (event.event === "tools_changed") void advertisePrompts(session, log);
      },
      // A backlog of unwritten updates (an editor reading slower than tokens arrive) merges text.
      { windowMs: state.deps.coalesceMs, busy: () => session.updates.busy },
      (emit) => core.runner.runTurn({ session_id: session.id, user_id: ACP_USER, ...turnChoice, ...(command === null ? { input } : { prompt: command }) }, { signal: controller.signal, emit, askApproval: permissionAsker(session, updates, log),
        // An editor that shows forms answers a server's question mid-turn; otherwise the server gets a decline.
        askElicitation: canElicit(state.clientCapabilities) ? elicitationAsker(session, log) : undefined,
        tools: session.tools, meter: ACP_TURNS }),
    );
    reportWarnings(state, session, result);
    await recordTurn(core, session, params, log);
    // A server may have changed its prompts meanwhile (prompts/list_changed): the commands follow
    // (not awaited: a slow server must not hold the answer back).
    void advertisePrompts(session, log);
    return { stopReason: stopReasonOf(result) };
  } catch (error) {
    if (controller.signal.aborted) return { stopReason: "cancelled" };
    // The chosen model could not load: the next prompts go back to the default agent (the editor is told).
    const core = await state.deps.core().catch(() => null);
    if (core !== null) await fallBackAfterFailure(state, core, session, error).catch((cause: unknown) => log.warn({ err: cause }, "could not fall back to the default agent"));
    throw error;
  } finally {
    requestSignal.removeEventListener("abort", onRequestCancel);
    session.endPrompt(controller);
    await session.updates.flushed();
  }
}

/** Where an ACP turn's tokens are counted (ACP has no keys). */
const ACP_TURNS = { endpoint: "acp", key: "none" } as const;

/** A paused turn cannot happen here (ACP asks its user), but would end the turn as any other. */
function stopReasonOf(outcome: TurnOutcome): StopReason {
  switch (outcome.finish_reason) {
    case "aborted":
      return outcome.abort_reason === "max_steps" ? "max_turn_requests" : "end_turn";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    case "stop":
    case "tool_calls":
    case "paused":
      return "end_turn";
    default: {
      const unreachable: never = outcome.finish_reason;
      throw new Error(`unknown finish reason ${String(unreachable)}`);
    }
  }
}

/** Warnings (history trimmed to fit, a repaired history) are logged, and shown where the editor takes notices. */
function reportWarnings(state: AcpConnectionState, session: AcpSession, result: TurnOutcome): void {
  if (result.warnings.length === 0) return;
  state.logger.info({ session_id: session.id, warnings: result.warnings }, "turn finished with warnings");
  if (!takesNotices(state)) return;
  for (const warning of result.warnings) session.updates.send({ sessionUpdate: "notice", severity: "warning", title: warning });
}

/** The editor advertised `session.notices`: `notice` updates may be sent. */
function takesNotices(state: AcpConnectionState): boolean {
  return state.clientCapabilities.session?.notices !== undefined && state.clientCapabilities.session.notices !== null;
}

/** The session's meta after a finished turn: listed from now on, titled by its first prompt. */
async function recordTurn(core: AcpCore, session: AcpSession, params: PromptRequest, log: AcpConnectionState["logger"]): Promise<void> {
  try {
    const now = new Date().toISOString();
    const meta = await core.catalog.readMeta(ACP_USER, session.id);
    await core.catalog.writeMeta(ACP_USER, session.id, {
      version: 1,
      cwd: session.cwd,
      title: meta?.title ?? titleOf(params.prompt),
      created_at: meta?.created_at ?? now,
      updated_at: now,
      // The choice as it is now (set_config_option may have changed it during the prompt).
      ...storedChoice(session.choice),
    });
  } catch (error) {
    // The turn itself is stored; only its listing is behind.
    log.warn({ err: error }, "could not record the session's meta");
  }
}
