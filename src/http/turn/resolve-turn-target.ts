import type { Context } from "hono";
import type { HttpDeps } from "../http-deps.js";
import type { ModelResolver } from "../resolve-model.js";
import { requestKeyScope } from "../request/request-key.js";
import { requestRecord } from "../request/request-record.js";
import { resolveServedModel } from "./resolve-served-model.js";

/** Who answers a turn request, as every dialect reads its `model`. */
export interface TurnTarget {
  /** The agent that answers (the default agent for a downloaded model or http.unknown_model's fallback). */
  agent: string;
  /** The name the client asked for (an agent, an alias, a downloaded model), echoed back. */
  id: string;
  /** The `llama.models` name that serves it. */
  modelName: string;
  /** Spread into the turn request: a downloaded model served on demand is named (the default agent's turn, on that model). */
  onModel: { model?: string };
  /** The fallback's warning (http.unknown_model: default), else none. */
  warnings: string[];
  /** The model reads images. */
  vision: () => boolean;
  /** The serving engine's degradation tier, read when the answer is written. */
  degradationTier: () => string;
}

/**
 * A request's `model` resolved (resolveServedModel's order) and checked against the request's key
 * scope: the one step chat completions, Responses and Messages share before building their turn.
 */
export async function resolveTurnTarget(c: Context, deps: HttpDeps, resolver: ModelResolver, requested: string | undefined): Promise<TurnTarget> {
  const resolved = await resolveServedModel(resolver, deps.models, requested, requestRecord(c));
  requestKeyScope(c).assertModel(resolved);
  // Chat, Responses and Messages name agents only (no llama.models names), so there is always one.
  const agent = resolved.agent ?? "";
  const { modelName } = resolved;
  const warnings = resolved.fallback === true ? [`model ${JSON.stringify(resolved.id.slice(0, 200))} matches no agent or alias: answered by the default agent "${agent}" (http.unknown_model: default)`] : [];
  return {
    agent,
    id: resolved.id,
    modelName,
    onModel: resolved.downloaded === true ? { model: modelName } : {},
    warnings,
    vision: () => deps.models?.describe(modelName).capabilities.vision ?? false,
    degradationTier: () => deps.health().engines[modelName]?.degradationTier ?? "NORMAL",
  };
}
