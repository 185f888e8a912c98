// POST /v1/completions passed through to an OpenAI-compatible server (an `openai` upstream, or
// our own llama-server, which implements /v1/completions with `suffix` as infill), streamed with
// the official client and mapped to CompletionChunks.
import type OpenAI from "openai";
import type { Completion } from "openai/resources/completions";
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { CompletionChunk, CompletionFinishReason, CompletionRequest } from "../completion-types.js";
import type { UpstreamContext } from "./openai-errors.js";
import { UpstreamRequest } from "./upstream-request.js";
import { toPassthroughError } from "./upstream-refusal.js";

export interface OpenAiCompletionOptions {
  client: OpenAI;
  model: string;
  request: CompletionRequest;
  logger?: Logger;
}

/**
 * Text chunks, then `usage` (when the server reports it) and exactly one `end`. Aborting
 * `request.signal`, or a consumer that stops iterating, closes the upstream request; the iterator
 * then throws `cancelled`. An upstream 400/422 is the client's `invalid_request`.
 */
export async function* streamOpenAiCompletion(options: OpenAiCompletionOptions): AsyncGenerator<CompletionChunk, void, undefined> {
  const { client, model, request, logger } = options;
  const context: UpstreamContext = { baseUrl: client.baseURL, model };
  const upstream = new UpstreamRequest(request.signal);
  const isAborted = (): boolean => upstream.isAborted();
  try {
    let stream: AsyncIterable<Completion>;
    try {
      stream = await client.completions.create(
        {
          model,
          prompt: request.prompt,
          ...(request.suffix === undefined ? {} : { suffix: request.suffix }),
          max_tokens: request.maxTokens,
          temperature: request.temperature,
          ...(request.stop.length > 0 ? { stop: request.stop } : {}),
          ...(request.topP === undefined ? {} : { top_p: request.topP }),
          ...(request.seed === undefined ? {} : { seed: request.seed }),
          ...(request.presencePenalty === undefined ? {} : { presence_penalty: request.presencePenalty }),
          ...(request.frequencyPenalty === undefined ? {} : { frequency_penalty: request.frequencyPenalty }),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: upstream.signal },
      );
    } catch (err) {
      throw toPassthroughError(err, context, isAborted());
    }
    let finish: string | null = null;
    let usage: { inputTokens: number; outputTokens: number } | null = null;
    try {
      for await (const chunk of stream) {
        if (isAborted()) break;
        const choice = chunk.choices.find((c) => c.index === 0) ?? chunk.choices[0];
        if (choice !== undefined) {
          if (typeof choice.finish_reason === "string") finish = choice.finish_reason;
          if (typeof choice.text === "string" && choice.text !== "") yield { type: "text", delta: choice.text };
        }
        // The last report is the total (some servers repeat cumulative usage).
        if (chunk.usage !== undefined && chunk.usage !== null) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
      }
    } catch (err) {
      throw toPassthroughError(err, context, isAborted());
    }
    if (isAborted()) throw upstream.cancelled();
    if (finish === null) {
      throw new RuntimeError("engine_error", `The completion stream from ${context.baseUrl} ended before the model finished (no finish_reason)`, { details: { base_url: context.baseUrl } });
    }
    if (usage !== null) yield { type: "usage", ...usage };
    yield { type: "end", finishReason: mapFinish(finish) };
    upstream.complete();
    logger?.debug({ model, finish, usage }, "openai completion finished");
  } finally {
    upstream.close();
  }
}

function mapFinish(reason: string): CompletionFinishReason {
  return reason === "length" ? "length" : "stop";
}
