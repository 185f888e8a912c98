import type { Config } from "../../config/schema.js";
import type { Engine } from "../../engine/engine.js";
import type { TokenizerService } from "../../protocol/methods/tokenize.js";
import { RuntimeError } from "../../shared/runtime-error.js";

/**
 * The stdio `tokenize` / `detokenize` methods on a configured model's engine: `model` is a
 * `llama.models` name (absent: the default agent's model). An engine with no reachable tokenizer
 * (openai) is refused with invalid_request, as POST /tokenize refuses it with a 400.
 */
export function modelTokenizer(config: Config, engine: (name: string) => Promise<Engine>, defaultModel: (config: Config) => string | undefined): TokenizerService {
  const engineFor = async (model: string | undefined, need: "tokenize" | "detokenize"): Promise<Engine> => {
    const name = model ?? defaultModel(config);
    if (name === undefined || !(name in config.llama.models)) {
      const known = Object.keys(config.llama.models).join(", ");
      throw new RuntimeError("invalid_params", name === undefined ? `No model given and no default agent model; known models: ${known}` : `Unknown model "${name}"; known models: ${known}`, { details: { param: "model" } });
    }
    const found = await engine(name);
    if (found[need] === undefined) throw new RuntimeError("invalid_request", `Model "${name}" (engine ${found.kind}) has no tokenizer here: an openai upstream's tokenizer is not reachable`, { details: { param: "model" } });
    return found;
  };
  return {
    tokenize: async (model, request) => {
      const found = await engineFor(model, "tokenize");
      return (found.tokenize as NonNullable<Engine["tokenize"]>).call(found, { ...request, maxTokens: config.llama.max_tokenize_tokens });
    },
    detokenize: async (model, request) => {
      const found = await engineFor(model, "detokenize");
      return (found.detokenize as NonNullable<Engine["detokenize"]>).call(found, request);
    },
  };
}
