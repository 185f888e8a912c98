import { withCoalescedEmit } from "../../agent/delta-coalescer.js";
import type { SessionRunner } from "../../agent/session-runner.js";
import type { SessionTurnOutcome } from "../../agent/turn-outcome.js";
import type { MetricsRecorder } from "../../shared/metrics-recorder.js";
import type { ElicitationRequest } from "../../tools/tool-types.js";
import { toRuntimeError } from "../../shared/runtime-error.js";
import { defineMethod, type MethodDefinition } from "../method.js";
import { CHAT_TURNS, meterChat } from "./chat-meter.js";
import { toEventFields } from "../../wire/agent-event-fields.js";

/**
 * Seed 000 `chat`: one agent turn; AgentLoop events stream before the result. Text deltas within
 * `coalesceMs` of each other leave as one event (stdio.coalesce_ms; 0 = one per engine chunk).
 * `metrics`: where the call is counted (the runtime's recorder; absent: not counted).
 */
export function chatMethod(runner: () => SessionRunner | Promise<SessionRunner>, coalesceMs = 0, metrics?: () => Promise<MetricsRecorder>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.chatParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.chatResult),
    events: () => import("./result-schemas.js").then((schemas) => schemas.chatEvents),
    handle: async (params, context) => {
      const turns = await runner();
      const meter = metrics === undefined ? undefined : meterChat(await metrics(), (agent) => turns.agents().find((known) => known.name === agent)?.model ?? "none");
      try {
        const outcome = await withCoalescedEmit(
          (event) => {
            const { name, fields } = toEventFields(event);
            context.emit(name, fields);
          },
          // The writer's backlog (a host reading slower than tokens arrive) holds merged text back.
          { windowMs: coalesceMs, ...(context.outputBusy ? { busy: context.outputBusy } : {}) },
          (emit) =>
            turns.runTurn(params, {
              signal: context.signal,
              emit: (event) => {
                meter?.observe(event);
                emit(event);
              },
              logger: context.log,
              meter: CHAT_TURNS,
              // The host answers a server's question in its next chat (resume + elicitation).
              pauseForElicitation: true,
            }),
        );
        meter?.done("ok");
        return chatResultOf(outcome);
      } catch (error) {
        meter?.done(toRuntimeError(error).code);
        throw error;
      }
    },
  });
}

/** Seed 000's result: the finish reason is not on this wire (a paused turn says so by `pending_approval`). */
export function chatResultOf(outcome: SessionTurnOutcome): {
  response: string;
  session_id: string;
  trace_id: string;
  warnings: string[];
  pending_approval?: { tool: string; args: Record<string, unknown> };
  pending_elicitation?: ElicitationRequest;
} {
  const { response, session_id, trace_id, warnings, pending_approval, pending_elicitation } = outcome;
  return { response, session_id, trace_id, warnings, ...(pending_approval === undefined ? {} : { pending_approval }), ...(pending_elicitation === undefined ? {} : { pending_elicitation }) };
}
