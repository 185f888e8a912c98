import { noParams } from "../dispatcher.js";
import { defineMethod, type MethodDefinition } from "../method.js";

/** The same report as `local-ai doctor --json`, as data. */
export function doctorMethod(runDoctor: (signal: AbortSignal) => Promise<unknown>): MethodDefinition<never> {
  return defineMethod({
    params: noParams,
    handle: async (_params, context) => runDoctor(context.signal),
  });
}
