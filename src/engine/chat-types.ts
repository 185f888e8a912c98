/** The conversation as every engine receives it (OpenAI-shaped, since two of three engines speak it). */

export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

export interface ToolCall {
  /** Engine-assigned (or generated) id that the tool result refers back to. */
  id: string;
  name: string;
  /** The raw JSON text of the arguments as the model produced it (may be invalid JSON). */
  arguments: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  /**
   * `preamble`: what the model was given in front of this message (memory notes), kept apart from
   * what the user wrote and rendered into the message only for the model (renderForModel), so
   * every later turn renders it the same way and the KV cache prefix stays valid.
   */
  | { role: "user"; content: string | ContentPart[]; preamble?: string }
  | { role: "assistant"; content: string; tool_calls?: ToolCall[] }
  /** `is_error`: the call failed, was refused or declined (kept for replays; engines never send it). */
  | { role: "tool"; tool_call_id: string; name: string; content: string; is_error?: boolean };

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
  /** `cachedTokens`: prompt tokens served from the KV cache instead of evaluated, where the engine knows it. */
  | { type: "usage"; inputTokens: number; outputTokens: number; cachedTokens?: number }
  | { type: "end"; finishReason: FinishReason };

/** OpenAI `response_format`: free text, any JSON object, or JSON matching a schema. */
export type ResponseFormat = { type: "text" } | { type: "json_object" } | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict?: boolean };

/** OpenAI `tool_choice`: whether (and which) tool the model must call. */
export type ToolChoice = "auto" | "none" | "required" | { name: string };

/** Per-request sampling and output controls (OpenAI fields) that override the agent's config. */
export interface SamplingOverrides {
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: ResponseFormat;
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
}

export interface GenerateRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** 0 = greedy. */
  temperature: number;
  maxTokens: number;
  seed?: number | null;
  topP?: number;
  /** Generation stops before any of these strings (they are not part of the output). */
  stop?: string[];
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: ResponseFormat;
  /** Only with `tools`; "none" is applied by not offering tools at all. */
  toolChoice?: Exclude<ToolChoice, "none">;
  parallelToolCalls?: boolean;
  /** The conversation this request continues (user/session): engines keep its KV cache warm. */
  cacheKey?: string;
  /** Aborting stops generation at once; the stream then throws a `cancelled` RuntimeError. */
  signal?: AbortSignal;
}

/** Flattens user content parts to text for engines without image input. */
export function contentText(content: string | ContentPart[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : `[image: ${part.image_url.url.slice(0, 64)}]`)).join("\n");
}
