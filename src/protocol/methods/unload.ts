import { defineMethod, type MethodDefinition } from "../method.js";

/**
 * `unload {model?}`: frees a loaded model (embedded: context and model disposed; llama-server:
 * child stopped), or every loaded model without `model`; the next use loads it again. Answers
 * `{unloaded: [names that were loaded]}`; an unknown model is invalid_params, a model with
 * requests running is `busy` (and nothing is unloaded).
 */
export function unloadMethod(unload: (model: string | undefined) => Promise<string[]>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.unloadParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.unloadResult),
    handle: async (input) => ({ unloaded: await unload(input.model) }),
  });
}
