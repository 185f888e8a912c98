import { withCoalescedEmit } from "../../agent/delta-coalescer.js";
import type { SessionRunner } from "../../agent/session-runner.js";
import type { SessionTurnOutcome } from "../../agent/turn-outcome.js";
import { defineMethod, type MethodDefinition } from "../method.js";
import { toEventFields } from "../../wire/agent-event-fields.js";

/**
 * Seed 000 `chat`: one agent turn; AgentLoop events stream before the result. Text deltas within
 * `coalesceMs` of each other leave as one event (stdio.coalesce_ms; 0 = one per engine chunk).
 */
export function chatMethod(runner: () => SessionRunner | Promise<SessionRunner>, coalesceMs = 0): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.chatParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.chatResult),
    events: () => import("./result-schemas.js").then((schemas) => schemas.chatEvents),
    handle: async (params, context) => {
      const turns = await runner();
      const outcome = await withCoalescedEmit(
        (event) => {
          const { name, fields } = toEventFields(event);
          context.emit(name, fields);
        },
        // The writer's backlog (a host reading slower than tokens arrive) holds merged text back.
        { windowMs: coalesceMs, ...(context.outputBusy ? { busy: context.outputBusy } : {}) },
        (emit) => turns.runTurn(params, { signal: context.signal, emit, logger: context.log }),
      );
      return chatResultOf(outcome);
    },
  });
}

/** Seed 000's result: the finish reason is not on this wire (a paused turn says so by `pending_approval`). */
export function chatResultOf(outcome: SessionTurnOutcome): { response: string; session_id: string; trace_id: string; warnings: string[]; pending_approval?: { tool: string; args: Record<string, unknown> } } {
  const { response, session_id, trace_id, warnings, pending_approval } = outcome;
  return { response, session_id, trace_id, warnings, ...(pending_approval === undefined ? {} : { pending_approval }) };
}
