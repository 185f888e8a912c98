import type { Config } from "../config/schema.js";
import type { EngineRegistry } from "../engine/create-engine.js";
import { describeModel } from "../engine/describe-model.js";
import type { ModelAccess } from "../http/http-deps.js";
import { RuntimeError } from "../shared/runtime-error.js";

/**
 * serve-http's view of `llama.models`: the same engines the agents use (one load per model, the
 * same sequence pool), so an embeddings or completions request never loads a model twice.
 */
export function createModelAccess(config: Config, engines: () => EngineRegistry): ModelAccess {
  return {
    names: Object.keys(config.llama.models),
    engine: (name) => engines().get(name),
    describe: (name) => {
      const model = config.llama.models[name];
      if (model === undefined) throw new RuntimeError("config_invalid", `No model "${name}" under llama.models`);
      return describeModel(model, engines().created().get(name));
    },
    ps: () => engines().ps(),
  };
}
