import { RuntimeError } from "../../shared/runtime-error.js";
import { defineMethod, type MethodDefinition } from "../method.js";
import type { StdioControl } from "../stdio-server.js";


/**
 * Seed 000 `cancel`: aborts an in-flight chat by request id; the chat then answers `cancelled`.
 * Without `request_id` it cancels the only active chat, and refuses when there are several.
 */
export function cancelMethod(control: StdioControl): MethodDefinition<never> {
  return defineMethod({
    control: true,
    params: () => import("./params-schemas.js").then((schemas) => schemas.cancelParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.statusResult),
    handle: async (input, context) => {
      const chats = control.inFlight.list("chat");
      let target;
      if (input.request_id === undefined) {
        if (chats.length === 0) throw new RuntimeError("invalid_request", "No chat is active to cancel");
        if (chats.length > 1) {
          throw new RuntimeError("invalid_request", `request_id is required: ${chats.length} chats are active (${chats.map((c) => JSON.stringify(c.id)).join(", ")})`);
        }
        target = chats[0];
      } else {
        target = chats.find((entry) => entry.id === input.request_id);
        if (target === undefined) throw new RuntimeError("invalid_request", `No active chat with request_id ${JSON.stringify(input.request_id)}`);
      }
      context.log.info({ target: target?.id }, "cancelling chat");
      target?.controller.abort("cancelled by the host");
      return { status: "ok" as const };
    },
  });
}
