import { z } from "zod";
import { RuntimeError } from "../../shared/runtime-error.js";
import { parseBody } from "../request/parse-body.js";

/** OpenAI's own limit on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

// Loose: clients send fields we do not use (`user`); they are tolerated, not refused.
const embeddingsBody = z
  .object({
    model: z.string().min(1).optional(),
    input: z.unknown(),
    encoding_format: z.enum(["float", "base64"]).nullish(),
    dimensions: z.number().int().min(1).nullish(),
    user: z.string().nullish(),
  })
  .loose();

export interface EmbeddingsRequest {
  model?: string;
  /** All texts or all token arrays, one vector each. */
  input: string[] | number[][];
  encodingFormat: "float" | "base64";
  dimensions?: number;
}

export function parseEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  const parsed = parseBody(embeddingsBody, body);
  return {
    ...(parsed.model === undefined ? {} : { model: parsed.model }),
    input: inputList(parsed.input),
    encodingFormat: parsed.encoding_format ?? "float",
    ...(parsed.dimensions === undefined || parsed.dimensions === null ? {} : { dimensions: parsed.dimensions }),
  };
}

const isTokenArray = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((token) => Number.isInteger(token) && (token as number) >= 0);

/** The four OpenAI shapes (string, strings, tokens, token arrays) as one list; empty texts are refused as OpenAI does. */
function inputList(input: unknown): string[] | number[][] {
  const refuse = (why: string): never => {
    throw new RuntimeError("invalid_request", `input: ${why}`, { details: { param: "input" } });
  };
  if (typeof input === "string") return input === "" ? refuse("must not be empty") : [input];
  if (!Array.isArray(input) || input.length === 0) {
    return refuse("expected a non-empty string, an array of strings, an array of token ids or an array of token id arrays");
  }
  if (input.length > MAX_EMBEDDING_INPUTS) return refuse(`at most ${MAX_EMBEDDING_INPUTS} inputs per request (got ${input.length})`);
  if (input.every((entry) => typeof entry === "string")) {
    const empty = input.indexOf("");
    return empty === -1 ? input : refuse(`input[${empty}] must not be empty`);
  }
  if (isTokenArray(input)) return [input];
  if (input.every(isTokenArray)) return input;
  return refuse("expected strings only or token id arrays only (non-negative integers, non-empty)");
}
