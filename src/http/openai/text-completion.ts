import type { CompletionFinishReason } from "../../engine/completion-types.js";
import type { Usage } from "./completion.js";

/** The legacy `text_completion` objects: the whole answer, its stream chunks, the usage chunk. */

/** Usage summed from an engine's chunks (text completions run the engine directly, no turn). */
export class UsageTally {
  prompt = 0;
  completion = 0;
  cached: number | null = null;
  add(input: number, output: number, cached?: number): void {
    this.prompt += input;
    this.completion += output;
    if (cached !== undefined) this.cached = (this.cached ?? 0) + cached;
  }
  toJSON(): Usage {
    const usage: Usage = { prompt_tokens: this.prompt, completion_tokens: this.completion, total_tokens: this.prompt + this.completion };
    if (this.cached !== null) usage.prompt_tokens_details = { cached_tokens: this.cached };
    return usage;
  }
}

export interface TextCompletionIdentity {
  /** `cmpl-<random>` */
  id: string;
  created: number;
  model: string;
}

export function textCompletion(identity: TextCompletionIdentity, text: string, finishReason: CompletionFinishReason, usage: Usage): Record<string, unknown> {
  return { ...head(identity), choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }], usage };
}

/** A streamed piece; the last one has empty text and the finish reason. */
export function textCompletionChunk(identity: TextCompletionIdentity, text: string, finishReason: CompletionFinishReason | null = null): Record<string, unknown> {
  return { ...head(identity), choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }] };
}

/** `stream_options.include_usage`: a last chunk with no choices. */
export function textCompletionUsageChunk(identity: TextCompletionIdentity, usage: Usage): Record<string, unknown> {
  return { ...head(identity), choices: [], usage };
}

function head(identity: TextCompletionIdentity): Record<string, unknown> {
  return { id: identity.id, object: "text_completion", created: identity.created, model: identity.model };
}
