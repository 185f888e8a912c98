import type { LlamaModel, Token } from "node-llama-cpp";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { TokenizeRequest, TokenizeResult } from "../tokenize-types.js";

/**
 * POST /tokenize on a node-llama-cpp model, with llama-server's defaults: special-token text is
 * parsed (`parse_special` true) and BOS is only added with `add_special`.
 */
export function tokenizeWith(model: LlamaModel, request: TokenizeRequest): TokenizeResult {
  const tokens: number[] = [...model.tokenize(request.content, request.parseSpecial !== false)];
  const bos = model.tokens.bos;
  if (request.addSpecial === true && bos !== null && model.tokens.shouldPrependBosToken && tokens[0] !== bos) tokens.unshift(bos);
  if (request.withPieces !== true) return { tokens };
  // Each piece read after the tokens before it: a word's leading space survives (SentencePiece),
  // so the pieces joined are the text.
  return { tokens, pieces: tokens.map((token, index) => model.detokenize([token as Token], true, tokens.slice(0, index) as Token[])) };
}

/** POST /detokenize: special tokens are written out as their text (as llama-server does). */
export function detokenizeWith(model: LlamaModel, modelName: string, tokens: readonly number[]): string {
  const vocabulary = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
  const bad = tokens.findIndex((token) => !Number.isInteger(token) || token < 0 || token >= vocabulary);
  if (bad !== -1) throw new RuntimeError("invalid_request", `tokens[${bad}] is not a token id of model "${modelName}" (0-${vocabulary - 1})`, { details: { param: "tokens" } });
  return model.detokenize(tokens as Token[], true);
}
