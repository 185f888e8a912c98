import type { TurnOutcome, TurnUsage } from "../../agent/turn-outcome.js";
import { timingsField, type PromptTimings } from "../../wire/prompt-timings.js";
import type { ToolCall } from "../../shared/conversation/chat-message.js";

/** One turn as OpenAI objects: ids, the completion, and the chunks of its stream. */

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Only when the engine reported how many prompt tokens came from its KV cache. */
  prompt_tokens_details?: { cached_tokens: number };
}

export interface LocalAiExtension {
  /** The HTTP request's id (X-Request-Id). */
  request_id?: string;
  /** Only in session mode: a conversation kept by the client has no session. */
  session_id?: string;
  trace_id: string;
  warnings: string[];
  degradation_tier: string;
  pending_approval?: { tool: string; args: Record<string, unknown> };
  /** Session mode: the MCP server's question the turn paused on (answer with resume + elicitation). */
  pending_elicitation?: { server: string; message: string; requested_schema: Record<string, unknown> };
  /** What reading the prompt cost, where the engine says (embedded, llama-server). */
  timings?: PromptTimings;
}

export type OpenAiFinishReason = "stop" | "length" | "tool_calls";

/**
 * "tool_calls" only for calls of the client's own tools. A turn paused for approval is an
 * agent-internal tool call, not one the client should run: it ends with "stop" and says so in
 * `local_ai.pending_approval`. A refusal and a loop that gave up are a "stop" too (the warnings say why).
 */
export function openAiFinishReason(outcome: TurnOutcome): OpenAiFinishReason {
  switch (outcome.finish_reason) {
    case "length":
    case "tool_calls":
      return outcome.finish_reason;
    case "stop":
    case "content_filter":
    case "paused":
    case "aborted":
      return "stop";
    default: {
      const unreachable: never = outcome.finish_reason;
      throw new Error(`unknown finish reason ${String(unreachable)}`);
    }
  }
}

export function openAiUsage(usage: TurnUsage): Usage {
  const mapped: Usage = { prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens, total_tokens: usage.input_tokens + usage.output_tokens };
  if (usage.cached_input_tokens !== null) mapped.prompt_tokens_details = { cached_tokens: usage.cached_input_tokens };
  return mapped;
}

/** Shared identity of one completion: the id is fixed before the trace id is known (streams start first). */
export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
  /** The HTTP request's id (X-Request-Id), echoed in `local_ai.request_id`. */
  requestId?: string | undefined;
}

export function newCompletionIdentity(model: string, requestId?: string): CompletionIdentity {
  return { id: "chatcmpl-pending", created: Math.floor(Date.now() / 1000), model, ...(requestId === undefined ? {} : { requestId }) };
}

/** The one place a chat completion gets its id: `chatcmpl-<trace_id>`, as soon as the turn's trace id is known. */
export function assignCompletionId(identity: CompletionIdentity, traceId: string): void {
  identity.id = `chatcmpl-${traceId}`;
}

export function localAiObject(outcome: TurnOutcome, degradationTier: string, requestId?: string): LocalAiExtension {
  const local: LocalAiExtension = { ...(requestId === undefined ? {} : { request_id: requestId }), ...(outcome.session_id === null ? {} : { session_id: outcome.session_id }), trace_id: outcome.trace_id, warnings: outcome.warnings, degradation_tier: degradationTier, ...timingsField(outcome.usage) };
  // A stateless turn cannot pause: its warning says the call was not run, there is nothing to resume.
  if (outcome.pending_approval !== undefined && outcome.session_id !== null) local.pending_approval = outcome.pending_approval;
  if (outcome.pending_elicitation !== undefined && outcome.session_id !== null) local.pending_elicitation = outcome.pending_elicitation;
  return local;
}

/** The turn's own fields on the opt-in events stream's `result` frame (as the stdio chat result, plus the finish reason). */
export function resultFields(outcome: TurnOutcome): Record<string, unknown> {
  const { response, trace_id, warnings, session_id, pending_approval, pending_elicitation, tool_calls } = outcome;
  return {
    response,
    ...(session_id === null ? {} : { session_id }),
    trace_id,
    warnings,
    ...(pending_approval === undefined || session_id === null ? {} : { pending_approval }),
    ...(pending_elicitation === undefined || session_id === null ? {} : { pending_elicitation }),
    finish_reason: openAiFinishReason(outcome),
    ...(tool_calls === undefined ? {} : { tool_calls }),
  };
}

/** OpenAI's tool_calls array (arguments are JSON text). */
export function openAiToolCalls(calls: readonly ToolCall[]): Array<Record<string, unknown>> {
  return calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
}

/** `reasoning`: the message's `reasoning_content` (a stream sent it as chunks already). */
export function completionObject(identity: CompletionIdentity, outcome: TurnOutcome, degradationTier: string, reasoning = outcome.reasoning): Record<string, unknown> {
  const calls = outcome.tool_calls ?? [];
  const message: Record<string, unknown> = { role: "assistant", content: calls.length > 0 && outcome.response === "" ? null : outcome.response, refusal: null };
  if (calls.length > 0) message.tool_calls = openAiToolCalls(calls);
  if (reasoning !== "") message.reasoning_content = reasoning;
  return {
    id: identity.id,
    object: "chat.completion",
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: openAiFinishReason(outcome) }],
    usage: openAiUsage(outcome.usage),
    local_ai: localAiObject(outcome, degradationTier, identity.requestId),
  };
}

export function chunkObject(identity: CompletionIdentity, delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: identity.id,
    object: "chat.completion.chunk",
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/**
 * `JSON.stringify(chunkObject(identity, { [field]: text }))`, byte for byte, written as a template:
 * the frame sent per text burst of every streamed chat completion, so it skips building and
 * walking the nested object (the unit test holds it to the object's serialisation).
 */
export function textChunkJson(identity: CompletionIdentity, field: "content" | "reasoning_content", text: string): string {
  return `{"id":${JSON.stringify(identity.id)},"object":"chat.completion.chunk","created":${JSON.stringify(identity.created)},"model":${JSON.stringify(identity.model)},"choices":[{"index":0,"delta":{"${field}":${JSON.stringify(text)}},"logprobs":null,"finish_reason":null}]}`;
}

/**
 * The calls as OpenAI streams them: per call one delta with index, id, type and name (empty
 * arguments), then the arguments in fragments. Our engines hand over a call whole, so the
 * fragments are cut from its complete JSON; clients assemble them by index either way.
 */
export function toolCallChunks(identity: CompletionIdentity, calls: readonly ToolCall[], fragmentChars = 32): Array<Record<string, unknown>> {
  const chunks: Array<Record<string, unknown>> = [];
  for (const [index, call] of calls.entries()) {
    chunks.push(chunkObject(identity, { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (let at = 0; at < call.arguments.length; at += fragmentChars) {
      chunks.push(chunkObject(identity, { tool_calls: [{ index, function: { arguments: call.arguments.slice(at, at + fragmentChars) } }] }));
    }
  }
  return chunks;
}

/** `return_progress`: how far the prompt has been read, as llama-server streams it (a chunk with empty choices). */
export function progressChunk(identity: CompletionIdentity, progress: { processed: number; total: number; cached: number }, timeMs: number): Record<string, unknown> {
  return {
    id: identity.id,
    object: "chat.completion.chunk",
    created: identity.created,
    model: identity.model,
    choices: [],
    prompt_progress: { total: progress.total, cache: progress.cached, processed: progress.processed, time_ms: timeMs },
  };
}

/** `stream_options.include_usage`: the extra last chunk with empty choices, as OpenAI sends it. */
export function usageChunk(identity: CompletionIdentity, usage: Usage): Record<string, unknown> {
  return { id: identity.id, object: "chat.completion.chunk", created: identity.created, model: identity.model, choices: [], usage };
}
