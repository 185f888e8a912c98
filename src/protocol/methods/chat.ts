import { z } from "zod";
import { withCoalescedEmit } from "../../agent/delta-coalescer.js";
import type { SessionRunner } from "../../agent/session-runner.js";
import { defineMethod, type MethodDefinition } from "../method.js";
import { toEventFields } from "../../wire/agent-event-fields.js";

const contentPart = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("image_url"), image_url: z.object({ url: z.string() }) }),
]);

export const chatParams = z
  .object({
    user_id: z.string().optional(),
    session_id: z.string().optional(),
    agent: z.string().optional(),
    input: z.union([z.string(), z.array(contentPart)]).default(""),
    resume: z.boolean().default(false),
    approve_execution: z.boolean().default(false),
  })
  .loose();

/**
 * Seed 000 `chat`: one agent turn; AgentLoop events stream before the result. Text deltas within
 * `coalesceMs` of each other leave as one event (stdio.coalesce_ms; 0 = one per engine chunk).
 */
export function chatMethod(runner: () => SessionRunner, coalesceMs = 0): MethodDefinition<never> {
  return defineMethod({
    params: chatParams,
    handle: async (params, context) =>
      withCoalescedEmit(
        (event) => {
          const { name, fields } = toEventFields(event);
          context.emit(name, fields);
        },
        // The writer's backlog (a host reading slower than tokens arrive) holds merged text back.
        { windowMs: coalesceMs, ...(context.outputBusy ? { busy: context.outputBusy } : {}) },
        (emit) => runner().runTurn(params, { signal: context.signal, emit }),
      ),
  });
}
