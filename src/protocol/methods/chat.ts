import { withCoalescedEmit } from "../../agent/delta-coalescer.js";
import type { SessionRunner } from "../../agent/session-runner.js";
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
      return withCoalescedEmit(
        (event) => {
          const { name, fields } = toEventFields(event);
          context.emit(name, fields);
        },
        // The writer's backlog (a host reading slower than tokens arrive) holds merged text back.
        { windowMs: coalesceMs, ...(context.outputBusy ? { busy: context.outputBusy } : {}) },
        (emit) => turns.runTurn(params, { signal: context.signal, emit }),
      );
    },
  });
}
