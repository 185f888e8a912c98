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
