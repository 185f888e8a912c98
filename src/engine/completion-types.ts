/** What `Engine.complete` takes and streams: plain text completion, no chat template, no agent loop. */

export interface CompletionRequest {
  prompt: string;
  /** Fill-in-the-middle: the text after the gap. Only models with FIM tokens (or upstreams that do it). */
  suffix?: string;
  maxTokens: number;
  /** Generation ends before any of these; the stop text itself is not returned. */
  stop: string[];
  /** 0 = greedy. */
  temperature: number;
  topP?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Aborting stops generation at once; the stream then throws a `cancelled` RuntimeError. */
  signal?: AbortSignal;
}

export type CompletionFinishReason = "stop" | "length";

/** Exactly one `end` closes every successful stream; `usage` comes before it. */
export type CompletionChunk =
  | { type: "text"; delta: string }
  | { type: "usage"; inputTokens: number; outputTokens: number }
  | { type: "end"; finishReason: CompletionFinishReason };
