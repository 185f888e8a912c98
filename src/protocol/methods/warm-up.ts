import type { SessionRunner } from "../../agent/session-runner.js";
import { defineMethod, type MethodDefinition } from "../method.js";


/**
 * The seed's "explicit warm-up": loads the agent's model and starts the MCP servers now, so the
 * first chat does not pay for it. Shared with (and idempotent against) a concurrent first chat.
 */
export function warmUpMethod(runner: () => SessionRunner | Promise<SessionRunner>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.warmUpParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.warmUpResult),
    handle: async (input, context) => {
      const started = Date.now();
      await (await runner()).warmUp(input.agent, context.signal);
      return { status: "ok" as const, ms: Date.now() - started };
    },
  });
}
