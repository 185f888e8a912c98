import { z } from "zod";
import type { CompletionRequest } from "../../engine/completion-types.js";
import { HttpError } from "../http-error.js";
import { parseBody } from "../request/parse-body.js";

/** OpenAI's defaults for the legacy completions endpoint. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;
export const DEFAULT_COMPLETION_TEMPERATURE = 1;

// Loose: clients send fields we do not use (`user`); tolerated. Fields that would change the
// answer's shape and that we cannot honour are refused by name (see refuseUnsupported).
const completionsBody = z
  .object({
    model: z.string().min(1).optional(),
    prompt: z.union([z.string(), z.array(z.string()).min(1)]),
    suffix: z.string().nullish(),
    max_tokens: z.number().int().min(1).nullish(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    seed: z.number().int().nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().nullish() }).loose().nullish(),
    n: z.number().int().min(1).nullish(),
    best_of: z.number().int().min(1).nullish(),
    logprobs: z.number().int().min(0).nullish(),
    echo: z.boolean().nullish(),
    logit_bias: z.record(z.string(), z.number()).nullish(),
  })
  .loose();

type CompletionsBody = z.output<typeof completionsBody>;

export interface CompletionsRequest {
  model?: string;
  stream: boolean;
  includeUsage: boolean;
  /** Everything the engine needs except the abort signal. */
  completion: Omit<CompletionRequest, "signal">;
}

export function parseCompletionsRequest(body: unknown): CompletionsRequest {
  const parsed = parseBody(completionsBody, body);
  refuseUnsupported(parsed);
  const prompt = typeof parsed.prompt === "string" ? parsed.prompt : (parsed.prompt[0] ?? "");
  const stop = parsed.stop === undefined || parsed.stop === null ? [] : typeof parsed.stop === "string" ? [parsed.stop] : parsed.stop;
  const optional = <T>(value: T | null | undefined): T | undefined => value ?? undefined;
  const completion: Omit<CompletionRequest, "signal"> = {
    prompt,
    maxTokens: parsed.max_tokens ?? DEFAULT_COMPLETION_MAX_TOKENS,
    stop,
    temperature: parsed.temperature ?? DEFAULT_COMPLETION_TEMPERATURE,
  };
  const suffix = optional(parsed.suffix);
  if (suffix !== undefined) completion.suffix = suffix;
  const topP = optional(parsed.top_p);
  if (topP !== undefined) completion.topP = topP;
  const seed = optional(parsed.seed);
  if (seed !== undefined) completion.seed = seed;
  const presence = optional(parsed.presence_penalty);
  if (presence !== undefined) completion.presencePenalty = presence;
  const frequency = optional(parsed.frequency_penalty);
  if (frequency !== undefined) completion.frequencyPenalty = frequency;
  return {
    ...(parsed.model === undefined ? {} : { model: parsed.model }),
    stream: parsed.stream === true,
    includeUsage: parsed.stream_options?.include_usage === true,
    completion,
  };
}

/** One choice, the generated text only, no token probabilities: anything else is refused by name. */
function refuseUnsupported(body: CompletionsBody): void {
  const refuse = (param: string, why: string): never => {
    throw new HttpError("unsupported_parameter", `${param}: ${why}`, param);
  };
  if (Array.isArray(body.prompt) && body.prompt.length > 1) refuse("prompt", "one prompt per request (send several requests)");
  if ((body.n ?? 1) > 1) refuse("n", "only n = 1 is supported (one choice per request)");
  if ((body.best_of ?? 1) > 1) refuse("best_of", "only best_of = 1 is supported");
  if (body.logprobs !== undefined && body.logprobs !== null) refuse("logprobs", "token log probabilities are not returned; omit logprobs");
  if (body.echo === true) refuse("echo", "echoing the prompt is not supported");
  if (body.logit_bias !== undefined && body.logit_bias !== null && Object.keys(body.logit_bias).length > 0) refuse("logit_bias", "token biases are not supported");
}
