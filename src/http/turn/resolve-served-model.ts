import type { ModelAccess } from "../http-deps.js";
import { HttpError } from "../http-error.js";
import type { RequestRecord } from "../request/request-record.js";
import type { ModelResolver, ResolvedModel } from "../resolve-model.js";

/**
 * A request's `model` (ModelResolver's order), then a downloaded model served on demand
 * (llama.serve_downloaded) where nothing configured matched, before http.unknown_model's
 * fallback. A downloaded model is answered by the default agent running on it. Nothing at all:
 * the 404 names what exists, the downloaded models among it. `record`: the request's, told the
 * agent and model for its metrics labels and access-log line.
 */
export async function resolveServedModel(resolver: ModelResolver, models: ModelAccess | undefined, requested: string | undefined, record?: RequestRecord, modelNames: readonly string[] = []): Promise<ResolvedModel> {
  const resolved = await resolveIn(resolver, models, requested, modelNames);
  record?.resolved(resolved.agent, resolved.modelName);
  return resolved;
}

async function resolveIn(resolver: ModelResolver, models: ModelAccess | undefined, requested: string | undefined, modelNames: readonly string[]): Promise<ResolvedModel> {
  let fallback: ResolvedModel | null = null;
  try {
    const resolved = resolver.resolve(requested, modelNames);
    if (resolved.fallback !== true) return resolved;
    fallback = resolved;
  } catch (error) {
    if (!(error instanceof HttpError && error.code === "model_not_found") || requested === undefined || models?.onDemand === undefined) throw error;
  }
  if (requested === undefined || models?.onDemand === undefined) return fallback as ResolvedModel;
  const found = await models.onDemand(requested);
  if (found?.served === true) return { id: requested, agent: resolver.defaultAgent() ?? null, modelName: found.name, downloaded: true };
  if (fallback !== null) return fallback;
  throw resolver.notFound(requested, modelNames, (await models.downloaded?.()) ?? [], found?.served === false ? found.file : undefined);
}
