import type { SessionRunner } from "../../agent/session-runner.js";
import { defineMethod, type MethodDefinition } from "../method.js";
import { toEventFields } from "../../wire/agent-event-fields.js";


/** Seed 000 `chat`: one agent turn; AgentLoop events stream before the result. */
export function chatMethod(runner: () => SessionRunner | Promise<SessionRunner>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.chatParams),
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
