import type { ReasoningEffort, SamplingOverrides, ToolChoice } from "../../shared/conversation/sampling-overrides.js";

/** An output format as the dialects give it (chat's `response_format`, Responses' `text.format`), flattened. */
export type OutputFormatField = { type: "text" } | { type: "json_object" } | { type: "json_schema"; name: string; schema?: Record<string, unknown> | undefined; strict?: boolean | null | undefined };

/** The sampling and output fields every dialect reads the same way (each maps its own names onto these). */
export interface SamplingFields {
  temperature?: number | null | undefined;
  top_p?: number | null | undefined;
  max_tokens?: number | null | undefined;
  stop?: string | string[] | null | undefined;
  seed?: number | null | undefined;
  frequency_penalty?: number | null | undefined;
  presence_penalty?: number | null | undefined;
  parallel_tool_calls?: boolean | null | undefined;
  format?: OutputFormatField | null | undefined;
  tool_choice?: ToolChoice | null | undefined;
  reasoning_effort?: ReasoningEffort | null | undefined;
}

/** Sampling and output fields that override the agent's config for this request. */
export function toSamplingOverrides(fields: SamplingFields): SamplingOverrides {
  const overrides: SamplingOverrides = {};
  if (fields.temperature != null) overrides.temperature = fields.temperature;
  if (fields.top_p != null) overrides.topP = fields.top_p;
  if (fields.max_tokens != null) overrides.maxTokens = fields.max_tokens;
  if (fields.stop != null) overrides.stop = (typeof fields.stop === "string" ? [fields.stop] : fields.stop).filter((s) => s !== "");
  if (fields.seed != null) overrides.seed = fields.seed;
  if (fields.frequency_penalty != null) overrides.frequencyPenalty = fields.frequency_penalty;
  if (fields.presence_penalty != null) overrides.presencePenalty = fields.presence_penalty;
  if (fields.parallel_tool_calls != null) overrides.parallelToolCalls = fields.parallel_tool_calls;
  const format = fields.format;
  if (format != null && format.type !== "text") {
    overrides.responseFormat = format.type === "json_object" || format.schema === undefined
      ? { type: "json_object" }
      : { type: "json_schema", name: format.name, schema: format.schema, ...(format.strict == null ? {} : { strict: format.strict }) };
  }
  if (fields.tool_choice != null) overrides.toolChoice = fields.tool_choice;
  if (fields.reasoning_effort != null) overrides.reasoningEffort = fields.reasoning_effort;
  return overrides;
}
