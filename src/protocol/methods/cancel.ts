import { RuntimeError } from "../../shared/runtime-error.js";
import { defineMethod, type MethodDefinition } from "../method.js";
import type { StdioControl } from "../stdio-server.js";


/** Requests `cancel` reaches: turns, and model downloads (which keep their partial file). */
const CANCELLABLE = ["chat", "pull"];

/**
 * Seed 000 `cancel`: aborts an in-flight chat (or pull) by request id; it then answers
 * `cancelled`. Without `request_id` it cancels the only active one, and refuses when there are several.
 */
export function cancelMethod(control: StdioControl): MethodDefinition<never> {
  return defineMethod({
    control: true,
    params: () => import("./params-schemas.js").then((schemas) => schemas.cancelParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.statusResult),
    handle: async (input, context) => {
      const chats = CANCELLABLE.flatMap((method) => control.inFlight.list(method));
      let target;
      if (input.request_id === undefined) {
        if (chats.length === 0) throw new RuntimeError("invalid_request", "No chat or pull is active to cancel");
        if (chats.length > 1) {
          throw new RuntimeError("invalid_request", `request_id is required: ${chats.length} chats or pulls are active (${chats.map((c) => JSON.stringify(c.id)).join(", ")})`);
        }
        target = chats[0];
      } else {
        target = chats.find((entry) => entry.id === input.request_id);
        if (target === undefined) throw new RuntimeError("invalid_request", `No active chat or pull with request_id ${JSON.stringify(input.request_id)}`);
      }
      context.log.info({ target: target?.id, method: target?.method }, "cancelling request");
      target?.controller.abort("cancelled by the host");
      return { status: "ok" as const };
    },
  });
}
