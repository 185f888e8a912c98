import { z } from "zod";
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

/** Seed 000 `chat`: one agent turn; AgentLoop events stream before the result. */
export function chatMethod(runner: () => SessionRunner | Promise<SessionRunner>): MethodDefinition<never> {
  return defineMethod({
    params: chatParams,
    handle: async (params, context) =>
      (await runner()).runTurn(params, {
        signal: context.signal,
        emit: (event) => {
          const { name, fields } = toEventFields(event);
          context.emit(name, fields);
        },
      }),
  });
}
