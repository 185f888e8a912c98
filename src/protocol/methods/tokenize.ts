import type { DetokenizeRequest, TokenizeRequest, TokenizeResult } from "../../engine/tokenize-types.js";
import { defineMethod, type MethodDefinition } from "../method.js";

/** What the tokenizer methods need: the model's tokenizer (model absent = the default agent's model). */
export interface TokenizerService {
  tokenize(model: string | undefined, request: TokenizeRequest): Promise<TokenizeResult>;
  detokenize(model: string | undefined, request: DetokenizeRequest): Promise<string>;
}

/**
 * `tokenize {model?, content, add_special?, parse_special?, with_pieces?}` -> `{tokens, pieces?}`:
 * the model's own tokenizer (POST /tokenize over stdio). An unknown model is invalid_params; an
 * engine without a reachable tokenizer (openai) is invalid_request.
 */
export function tokenizeMethod(service: () => Promise<TokenizerService>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.tokenizeParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.tokenizeResult),
    handle: async (input, context) => {
      const result = await (await service()).tokenize(input.model, {
        content: input.content,
        ...(input.add_special === undefined ? {} : { addSpecial: input.add_special }),
        ...(input.parse_special === undefined ? {} : { parseSpecial: input.parse_special }),
        withPieces: input.with_pieces === true,
        signal: context.signal,
      });
      return result.pieces === undefined ? { tokens: result.tokens } : { tokens: result.tokens, pieces: result.pieces };
    },
  });
}

/** `detokenize {model?, tokens}` -> `{content}`. */
export function detokenizeMethod(service: () => Promise<TokenizerService>): MethodDefinition<never> {
  return defineMethod({
    params: () => import("./params-schemas.js").then((schemas) => schemas.detokenizeParams),
    result: () => import("./result-schemas.js").then((schemas) => schemas.detokenizeResult),
    handle: async (input, context) => ({ content: await (await service()).detokenize(input.model, { tokens: input.tokens, signal: context.signal }) }),
  });
}
