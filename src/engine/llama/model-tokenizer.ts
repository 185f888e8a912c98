import { setImmediate as nextTurn } from "node:timers/promises";
import type { LlamaModel, Token } from "node-llama-cpp";
import { abortError } from "../../shared/abort.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { TokenizeRequest, TokenizeResult } from "../tokenize-types.js";
import { tooManyTokens } from "../tokenize-limit.js";
import { tokenizeSliced } from "./sliced-tokenize.js";

/**
 * The tokens before a piece that its text is read after: node-llama-cpp's detokenizer looks at its
 * last 3 (maxRecentDetokenizerTokens); a few more cost nothing and keep the pieces right should it
 * look further. Copying the whole prefix for every token made with_pieces quadratic.
 */
const PIECE_CONTEXT = 16;
/** Pieces made between two turns of the event loop (a few ms on any model). */
const PIECES_PER_TURN = 2048;

/**
 * POST /tokenize on a node-llama-cpp model, with llama-server's defaults: special-token text is
 * parsed (`parse_special` true) and BOS is only added with `add_special`. Long texts are tokenized
 * in slices that yield (sliced-tokenize.ts), and more than `maxTokens` tokens is refused as soon as
 * it is reached.
 */
export async function tokenizeWith(model: LlamaModel, request: TokenizeRequest): Promise<TokenizeResult> {
  const max = request.maxTokens;
  const tokens: number[] = await tokenizeSliced(model, request.content, {
    specialTokens: request.parseSpecial !== false,
    signal: request.signal,
    ...(max === undefined ? {} : { maxTokens: max, overLimit: () => tooManyTokens(max) }),
  });
  const bos = model.tokens.bos;
  if (request.addSpecial === true && bos !== null && model.tokens.shouldPrependBosToken && tokens[0] !== bos) tokens.unshift(bos);
  if (max !== undefined && tokens.length > max) throw tooManyTokens(max);
  if (request.withPieces !== true) return { tokens };
  return { tokens, pieces: await piecesOf(model, tokens, request.signal) };
}

/** Each token's text read after the tokens before it: a word's leading space survives (SentencePiece), so the pieces joined are the text. */
async function piecesOf(model: LlamaModel, tokens: readonly number[], signal: AbortSignal | undefined): Promise<string[]> {
  const pieces: string[] = [];
  for (let index = 0; index < tokens.length; index++) {
    if (index > 0 && index % PIECES_PER_TURN === 0) {
      await nextTurn();
      if (signal?.aborted === true) throw new RuntimeError("cancelled", "Tokenizing cancelled", { cause: abortError(signal) });
    }
    pieces.push(model.detokenize([tokens[index] as Token], true, tokens.slice(Math.max(0, index - PIECE_CONTEXT), index) as Token[]));
  }
  return pieces;
}

/** POST /detokenize: special tokens are written out as their text (as llama-server does). */
export function detokenizeWith(model: LlamaModel, modelName: string, tokens: readonly number[]): string {
  const vocabulary = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
  const bad = tokens.findIndex((token) => !Number.isInteger(token) || token < 0 || token >= vocabulary);
  if (bad !== -1) throw new RuntimeError("invalid_request", `tokens[${bad}] is not a token id of model "${modelName}" (0-${vocabulary - 1})`, { details: { param: "tokens" } });
  return model.detokenize(tokens as Token[], true);
}
