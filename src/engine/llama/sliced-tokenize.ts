import { setImmediate as nextTurn } from "node:timers/promises";
import type { LlamaModel, Token } from "node-llama-cpp";
import { abortError } from "../../shared/abort.js";
import { RuntimeError } from "../../shared/runtime-error.js";

/**
 * node-llama-cpp's tokenize is one synchronous native call: a multi-MiB text would hold the event
 * loop for seconds (and llama.cpp's SentencePiece tokenizer takes ~30 bytes per character while it
 * runs). A text longer than SLICE_CHARS is tokenized in slices with a turn of the event loop between
 * them, and the call stops as soon as `maxTokens` is passed.
 *
 * A seam must not change the tokens: the cut is placed before a whitespace that starts a word
 * (no GPT-style pretokenizer word and, in usual vocabularies, no SentencePiece token crosses it),
 * and each cut is verified: the tokens of the 64 characters before it must be a prefix of the
 * tokens of those characters followed by 64 after it (no token crosses the cut). A slice after the
 * first is tokenized behind the text before its cut and that text's tokens are dropped, so
 * SentencePiece's added leading space and special-token text need no per-tokenizer rules. A text
 * where no verified cut is found near the slice size (no whitespace for 16 Ki characters, and no
 * safe character either) is cut anyway: only such input can tokenize differently at a seam.
 */
export const SLICE_CHARS = 32 * 1024;
const SEAM_CHARS = 64;
const WHITESPACE_TRIES = 8;
const ANY_TRIES = 8;

export interface SlicedTokenizeOptions {
  /** Text such as `<|im_start|>` becomes its special token. */
  specialTokens: boolean;
  /** node-llama-cpp's "trimLeadingSpace": the text continues earlier content (no added leading space). */
  trimLeadingSpace?: boolean;
  /** Stop once more tokens than this are made; `overLimit` (given how many so far) is thrown. */
  maxTokens?: number;
  overLimit?: (count: number) => Error;
  signal?: AbortSignal | undefined;
}

export async function tokenizeSliced(model: LlamaModel, text: string, options: SlicedTokenizeOptions): Promise<Token[]> {
  const tokens: Token[] = [];
  await eachSlice(model, text, options, (slice) => {
    for (const token of slice) tokens.push(token);
  });
  return tokens;
}

/** How many tokens tokenizeSliced would make, without holding them (count_tokens of a multi-MiB prompt). */
export async function countTokensSliced(model: LlamaModel, text: string, options: SlicedTokenizeOptions): Promise<number> {
  let count = 0;
  await eachSlice(model, text, options, (slice) => (count += slice.length));
  return count;
}

async function eachSlice(model: LlamaModel, text: string, options: SlicedTokenizeOptions, take: (tokens: Token[]) => void): Promise<void> {
  const plain = (part: string): Token[] => model.tokenize(part, options.specialTokens);
  const first = (part: string): Token[] => model.tokenize(part, options.specialTokens, options.trimLeadingSpace === true ? "trimLeadingSpace" : undefined);
  let count = 0;
  let start = 0;
  while (start < text.length) {
    const end = text.length - start <= SLICE_CHARS ? text.length : cutNear(text, start + SLICE_CHARS, start + SLICE_CHARS / 2, plain);
    const slice = start === 0 ? first(text.slice(0, end)) : behind(text, start, end, plain);
    count += slice.length;
    checked(count, options);
    take(slice);
    start = end;
    if (start < text.length) {
      await nextTurn();
      if (options.signal?.aborted === true) throw new RuntimeError("cancelled", "Tokenizing cancelled", { cause: abortError(options.signal) });
    }
  }
}

function checked(count: number, options: SlicedTokenizeOptions): void {
  if (options.maxTokens !== undefined && count > options.maxTokens) {
    throw options.overLimit?.(count) ?? new RuntimeError("invalid_request", `The text is more than ${options.maxTokens} tokens`);
  }
}

/** The slice [start, end) tokenized after the text before `start` (whose tokens are dropped). */
function behind(text: string, start: number, end: number, plain: (part: string) => Token[]): Token[] {
  const from = seamStart(text, start);
  const before = plain(text.slice(from, start));
  const all = plain(text.slice(from, end));
  if (startsWith(all, before)) return all.slice(before.length);
  return plain(text.slice(start, end));
}

/** A verified cut in (floor, target]: before a word's whitespace first, then any character. */
function cutNear(text: string, target: number, floor: number, plain: (part: string) => Token[]): number {
  let tries = 0;
  for (let index = target; index > floor && tries < WHITESPACE_TRIES; index--) {
    if (isSpace(text.charCodeAt(index)) && !isSpace(text.charCodeAt(index - 1))) {
      tries++;
      if (seamHolds(text, index, plain)) return index;
    }
  }
  tries = 0;
  for (let index = target; index > floor && tries < ANY_TRIES; index--) {
    if (isLowSurrogate(text.charCodeAt(index))) continue;
    tries++;
    if (seamHolds(text, index, plain)) return index;
  }
  return isLowSurrogate(text.charCodeAt(target)) ? target - 1 : target;
}

/** No token crosses `cut`: the tokens before it are a prefix of the tokens across it. */
function seamHolds(text: string, cut: number, plain: (part: string) => Token[]): boolean {
  const from = seamStart(text, cut);
  let to = Math.min(text.length, cut + SEAM_CHARS);
  if (to < text.length && isLowSurrogate(text.charCodeAt(to))) to++;
  const before = plain(text.slice(from, cut));
  const across = plain(text.slice(from, to));
  // The text after the cut must add tokens of its own (a token may not end exactly there and grow).
  return startsWith(across, before) && across.length > before.length;
}

function seamStart(text: string, cut: number): number {
  const from = Math.max(0, cut - SEAM_CHARS);
  return isLowSurrogate(text.charCodeAt(from)) ? from + 1 : from;
}

function startsWith(tokens: readonly Token[], prefix: readonly Token[]): boolean {
  if (prefix.length > tokens.length) return false;
  for (let index = 0; index < prefix.length; index++) if (tokens[index] !== prefix[index]) return false;
  return true;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 9 || code === 13;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
