import type { ModelLoadEvent } from "./scheduler/scheduler-types.js";
/** What engines take and stream. The conversation's words (messages, tools, sampling) live in shared/conversation/: the store and every front door use them too. */
import type { ChatMessage, ToolCall } from "../shared/conversation/chat-message.js";
import type { ReasoningEffort, ResponseFormat, ToolChoice } from "../shared/conversation/sampling-overrides.js";
import type { ToolSpec } from "../shared/conversation/tool-spec.js";

/** `content_filter`: an OpenAI-compatible upstream withheld or cut the answer (a refusal). */
export type FinishReason = "stop" | "length" | "tool_calls" | "cancelled" | "content_filter";

/** What `Engine.generate` streams. Exactly one `end` chunk closes every successful stream. */
export type EngineChunk =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  /** A tool call begins; its arguments follow as `tool_call_delta` chunks with the same index. */
  | { type: "tool_call_start"; index: number; id: string; name: string }
  | { type: "tool_call_delta"; index: number; delta: string }
  /** The complete call, after its last delta. */
  | { type: "tool_call"; index: number; call: ToolCall }
  /**
   * `cachedTokens`: prompt tokens served from the KV cache instead of evaluated, where the engine
   * knows it; `promptMs`: how long reading the prompt took (until the first generated token).
   */
  | { type: "usage"; inputTokens: number; outputTokens: number; cachedTokens?: number; promptMs?: number }
  /** `stopSequence`: which of the request's `stop` strings ended the text, where the engine knows it (embedded). */
  | { type: "end"; finishReason: FinishReason; stopSequence?: string };

/**
 * How far an engine got reading a step's prompt: `total` tokens in the prompt, `cached` of them
 * reused from the KV cache, `processed` in the sequence so far (cached included; `total` once read).
 */
export interface PromptProgress {
  processed: number;
  total: number;
  cached: number;
}

export interface GenerateRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** 0 = greedy. */
  temperature: number;
  maxTokens: number;
  seed?: number | null;
  topP?: number;
  /** embedded and llama-server; the openai engine does not send it (OpenAI refuses the field). */
  topK?: number;
  /** Generation stops before any of these strings (they are not part of the output). */
  stop?: string[];
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: ResponseFormat;
  /** Only with `tools`; "none" is applied by not offering tools at all. */
  toolChoice?: Exclude<ToolChoice, "none">;
  parallelToolCalls?: boolean;
  /**
   * openai: sent as `reasoning_effort`; llama-server: `none` / `minimal` also turn the chat
   * template's thinking off (`enable_thinking: false`); embedded: no switch (not applied).
   */
  reasoningEffort?: ReasoningEffort;
  /** The conversation this request continues (user/session): engines keep its KV cache warm. */
  cacheKey?: string;
  /** Aborting stops generation at once; the stream then throws a `cancelled` RuntimeError. */
  signal?: AbortSignal;
  /** Told why the request waits for its model (queued for memory, loading): the scheduler's `model_load`. */
  onModelLoad?: (event: ModelLoadEvent) => void;
  /** Told how far the prompt has been read, as the engine reads it (embedded: after every chunk; llama-server: its `prompt_progress`). */
  onPromptProgress?: (progress: PromptProgress) => void;
}

