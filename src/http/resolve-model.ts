import { HttpError } from "./http-error.js";

export interface ResolvedModel {
  /** What the client asked for (or the default agent): echoed back as `model`. */
  id: string;
  /** The `llama.models` name that serves it. */
  modelName: string;
}

/**
 * `model` in embeddings and completions requests: an agent name (its model serves it, as in chat),
 * else a `llama.models` name directly; agents win when both match. Missing: the default agent.
 * Anything else is 404 `model_not_found` with `param: "model"`.
 */
export function resolveModel(requested: string | undefined, agents: Readonly<Record<string, string>>, modelNames: readonly string[]): ResolvedModel {
  const id = requested ?? Object.keys(agents)[0];
  if (id !== undefined) {
    const viaAgent = Object.hasOwn(agents, id) ? agents[id] : undefined;
    if (viaAgent !== undefined) return { id, modelName: viaAgent };
    if (modelNames.includes(id)) return { id, modelName: id };
  }
  const known = [...Object.keys(agents), ...modelNames.filter((name) => !Object.hasOwn(agents, name))];
  throw new HttpError("model_not_found", `The model ${JSON.stringify(requested ?? "")} does not exist. Agents and models: ${known.join(", ") || "none"}`, "model");
}
