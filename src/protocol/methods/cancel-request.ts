import { defineMethod, type MethodDefinition } from "../method.js";
import type { StdioControl } from "../stdio-server.js";

export const CANCEL_NOTIFICATION = "$/cancelRequest";


/**
 * `$/cancelRequest {id}` (the LSP convention seed 003 names): aborts the in-flight request with that
 * id, whatever its method; the request then answers the `cancelled` domain error. Sent as a
 * notification it is never answered; an id that is not in flight (already answered) is ignored.
 */
export function cancelRequestMethod(control: StdioControl): MethodDefinition<never> {
  return defineMethod({
    control: true,
    params: () => import("./params-schemas.js").then((schemas) => schemas.cancelRequestParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.nullResult),
    handle: async (input, context) => {
      const target = control.inFlight.get(input.id);
      if (target === undefined) {
        context.log.debug({ target: input.id }, "cancel for a request that is not in flight; ignored");
        return null;
      }
      context.log.info({ target: input.id, method: target.method }, "cancelling request");
      target.controller.abort("cancelled by the client");
      return null;
    },
  });
}
