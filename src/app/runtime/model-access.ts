import type { Config } from "../../config/schema.js";
import type { EngineRegistry } from "../../engine/create-engine.js";
import { describeModel } from "../../engine/describe-model.js";
import type { ModelAccess } from "../../http/http-deps.js";
import type { DownloadedModels } from "../../models/downloaded-models.js";
import { RuntimeError } from "../../shared/runtime-error.js";

/**
 * serve-http's view of `llama.models`: the same engines the agents use (one load per model, the
 * same sequence pool), so an embeddings or completions request never loads a model twice.
 * `config` is the runtime's model table (runtime.liveConfig()), where downloaded models served on
 * demand are added as they are first named.
 */
export function createModelAccess(config: Config, engines: () => EngineRegistry, downloaded: () => DownloadedModels): ModelAccess {
  return {
    names: Object.keys(config.llama.models),
    maxTokenizeTokens: config.llama.max_tokenize_tokens,
    engine: (name) => engines().get(name),
    describe: (name) => {
      const model = config.llama.models[name];
      if (model === undefined) throw new RuntimeError("config_invalid", `No model "${name}" under llama.models`);
      return describeModel(model, engines().created().get(name));
    },
    ps: () => engines().ps(),
    onDemand: async (requested) => {
      const found = await downloaded().find(requested);
      if (found === null) return null;
      if (!found.configured && !downloaded().served) return { served: false, file: found.path };
      return { served: true, name: downloaded().adopt(found) };
    },
    downloaded: () => downloaded().list(),
  };
}
