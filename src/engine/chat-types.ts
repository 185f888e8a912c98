import type { ModelLoadEvent } from "./scheduler-types.js";
/** What engines take and stream. The message types live in shared/ (the store keeps them too). */
import type { ChatMessage, ToolCall } from "../shared/chat-message.js";

export type { ChatMessage, ContentPart, ToolCall } from "../shared/chat-message.js";
export { contentText } from "../shared/chat-message.js";

/** A tool the model may call; `parameters` is a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

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

/** OpenAI `response_format`: free text, any JSON object, or JSON matching a schema. */
export type ResponseFormat = { type: "text" } | { type: "json_object" } | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict?: boolean };

/** OpenAI `tool_choice`: whether (and which) tool the model must call. */
export type ToolChoice = "auto" | "none" | "required" | { name: string };

/** How much the model should think (OpenAI `reasoning_effort` / Responses `reasoning.effort`). */
export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh";

/** Per-request sampling and output controls (OpenAI fields) that override the agent's config. */
export interface SamplingOverrides {
  temperature?: number;
  topP?: number;
  /** Sample from the k most likely tokens (Anthropic's and llama.cpp's top_k); not an OpenAI field. */
  topK?: number;
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: ResponseFormat;
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  reasoningEffort?: ReasoningEffort;
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

