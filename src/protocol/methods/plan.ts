import { z } from "zod";
import { defineMethod, type MethodDefinition } from "../method.js";

const params = z
  .object({
    /** Plan only this model (a key under llama.models); all of them when absent. */
    model: z.string().min(1).optional(),
  })
  .loose();

export type PlanParams = z.output<typeof params>;

/**
 * The same report as `local-ai plan --json`, as data. Needs a valid config (config_missing /
 * config_invalid otherwise); an unknown model is invalid_params listing the known ones.
 */
export function planMethod(runPlan: (params: { model?: string }, signal: AbortSignal) => Promise<unknown>): MethodDefinition<never> {
  return defineMethod({
    params,
    handle: async (input, context) => runPlan(input.model === undefined ? {} : { model: input.model }, context.signal),
  });
}
