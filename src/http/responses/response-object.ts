import type { PromptTimings } from "../../wire/prompt-timings.js";
import { randomBytes } from "node:crypto";
import type { McpOutputItem } from "./mcp-items.js";
import type { ResponsesRequest } from "./responses-schema.js";

/** The Response object and its output items, with every field the pinned `openai` types require. */

export type ItemStatus = "in_progress" | "completed" | "incomplete";

export interface OutputTextPart {
  type: "output_text";
  text: string;
  annotations: [];
  logprobs: [];
}

export interface ReasoningOutputItem {
  type: "reasoning";
  id: string;
  summary: [];
  content: Array<{ type: "reasoning_text"; text: string }>;
  status: ItemStatus;
}

export interface MessageOutputItem {
  type: "message";
  id: string;
  role: "assistant";
  status: ItemStatus;
  content: OutputTextPart[];
}

export interface FunctionCallOutputItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
  namespace?: string;
}

export type OutputItem = ReasoningOutputItem | MessageOutputItem | FunctionCallOutputItem | McpOutputItem;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

/** The fields fixed when the request arrives: id, time, model, and the settings the API echoes. */
export interface ResponseIdentity {
  id: string;
  /**
   * The random key the response's item ids carry (item_reference finds the response by it): drawn
   * apart from the id, so an item id that leaks does not name the response.
   */
  key: string;
  created_at: number;
  model: string;
  echo: Record<string, unknown>;
  /** The HTTP request's id (X-Request-Id) that created it, echoed in `local_ai.request_id`. */
  requestId?: string | undefined;
}

export interface LocalAiResponseExtension {
  request_id?: string;
  trace_id: string | null;
  warnings: string[];
  degradation_tier: string;
  /** What reading the prompt cost (the finished response), where the engine says. */
  timings?: PromptTimings;
}

export interface ResponseObject extends Record<string, unknown> {
  id: string;
  object: "response";
  created_at: number;
  status: ResponseStatus;
  model: string;
  output: OutputItem[];
  output_text: string;
  error: { code: "server_error"; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  usage: ResponseUsage | null;
  local_ai: LocalAiResponseExtension;
}

export function newIdentity(model: string, request: ResponsesRequest, store: boolean): ResponseIdentity {
  const key = randomBytes(12).toString("hex");
  return { id: `resp_${randomBytes(12).toString("hex")}`, key, created_at: Math.floor(Date.now() / 1000), model, echo: echoedSettings(request, store) };
}

export type ItemPrefix = "msg" | "rs" | "fc" | "in" | "mcpl" | "mcp" | "mcpr";

/** An item's id: `<prefix>_<the response's item key>_<n>` (item_reference finds its response by it). */
export const itemId = (identity: Pick<ResponseIdentity, "key">, prefix: ItemPrefix, n: number): string => `${prefix}_${identity.key}_${n}`;

/** The item key in an item id made by itemId; null for ids this server did not make. */
export function itemKeyOf(itemIdText: string): string | null {
  return /^(?:msg|rs|fc|in|mcpl|mcp|mcpr)_([0-9a-f]{24})_\d+$/.exec(itemIdText)?.[1] ?? null;
}

/** The request's settings as the API echoes them, defaults filled in as it reports them. */
function echoedSettings(request: ResponsesRequest, store: boolean): Record<string, unknown> {
  return {
    instructions: request.instructions ?? null,
    tools: (request.tools ?? []).map(withoutSecrets),
    tool_choice: request.tool_choice ?? "auto",
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    temperature: request.temperature ?? null,
    top_p: request.top_p ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    previous_response_id: request.previous_response_id ?? null,
    store,
    text: { format: request.text?.format ?? { type: "text" } },
    truncation: request.truncation ?? "disabled",
    metadata: request.metadata ?? {},
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    background: false,
    service_tier: "default",
    ...(request.prompt_cache_key == null ? {} : { prompt_cache_key: request.prompt_cache_key }),
    ...(request.user == null ? {} : { user: request.user }),
    ...(request.safety_identifier == null ? {} : { safety_identifier: request.safety_identifier }),
  };
}

/** An `mcp` tool as echoed (and stored): its credentials are not (header values masked, `authorization` dropped). */
function withoutSecrets(tool: { type: string } & Record<string, unknown>): Record<string, unknown> {
  if (tool.type !== "mcp") return tool;
  const { authorization: _dropped, ...rest } = tool;
  const headers = tool.headers;
  if (headers === null || typeof headers !== "object") return rest;
  return { ...rest, headers: Object.fromEntries(Object.keys(headers).map((name) => [name, "<redacted>"])) };
}

export interface ResponseState {
  status: ResponseStatus;
  output: OutputItem[];
  usage: ResponseUsage | null;
  error?: string;
  local: LocalAiResponseExtension;
}

export function responseObject(identity: ResponseIdentity, state: ResponseState): ResponseObject {
  return {
    id: identity.id,
    object: "response",
    created_at: identity.created_at,
    status: state.status,
    model: identity.model,
    output: state.output,
    // Not on OpenAI's wire (its SDKs compute it), but typed clients read it from stream events too.
    output_text: outputText(state.output),
    error: state.status === "failed" ? { code: "server_error", message: state.error ?? "The turn failed" } : null,
    incomplete_details: state.status === "incomplete" ? { reason: "max_output_tokens" } : null,
    ...identity.echo,
    ...(state.status === "completed" || state.status === "incomplete" ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    usage: state.usage,
    local_ai: state.local,
  };
}

export function outputText(output: readonly OutputItem[]): string {
  return output.flatMap((item) => (item.type === "message" ? item.content.map((part) => part.text) : [])).join("");
}

export function usageObject(prompt: number, completion: number, cached: number | null): ResponseUsage {
  return {
    input_tokens: prompt,
    input_tokens_details: { cached_tokens: cached ?? 0 },
    output_tokens: completion,
    // The engines do not report reasoning tokens apart from the answer's.
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: prompt + completion,
  };
}
