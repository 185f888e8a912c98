import type { TurnResult } from "../../agent/session-runner.js";
import type { StatelessTurnResult } from "../../agent/stateless-turn.js";
import type { ToolCall } from "../../engine/chat-types.js";

/** One turn as OpenAI objects: ids, the completion, and the chunks of its stream. */

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Only when the engine reported how many prompt tokens came from its KV cache. */
  prompt_tokens_details?: { cached_tokens: number };
}

export interface LocalAiExtension {
  /** Only in session mode: a conversation kept by the client has no session. */
  session_id?: string;
  trace_id: string;
  warnings: string[];
  degradation_tier: string;
  pending_approval?: { tool: string; args: Record<string, unknown> };
}

/** What a finished turn hands the OpenAI mapping, in either mode. */
export interface TurnOutcome {
  response: string;
  trace_id: string;
  warnings: string[];
  session_id?: string;
  pending_approval?: { tool: string; args: Record<string, unknown> };
  /**
   * "tool_calls" only for calls of the client's own tools. A turn paused for approval is an
   * agent-internal tool call, not one the client should run: it ends with "stop" and says so in
   * `local_ai.pending_approval`.
   */
  finish_reason: "stop" | "length" | "tool_calls";
  tool_calls?: ToolCall[];
  /** The turn's reasoning text (non-stream `message.reasoning_content`). */
  reasoning?: string;
}

export function fromSessionTurn(result: TurnResult): TurnOutcome {
  return { ...result, finish_reason: "stop" };
}

export function fromStatelessTurn(result: StatelessTurnResult): TurnOutcome {
  return { ...result };
}

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

/** Shared identity of one completion: the id is fixed before the trace id is known (streams start first). */
export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

export function localAiObject(outcome: TurnOutcome, degradationTier: string): LocalAiExtension {
  const local: LocalAiExtension = { ...(outcome.session_id === undefined ? {} : { session_id: outcome.session_id }), trace_id: outcome.trace_id, warnings: outcome.warnings, degradation_tier: degradationTier };
  if (outcome.pending_approval !== undefined) local.pending_approval = outcome.pending_approval;
  return local;
}

/** OpenAI's tool_calls array (arguments are JSON text). */
export function openAiToolCalls(calls: readonly ToolCall[]): Array<Record<string, unknown>> {
  return calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }));
}

export function completionObject(identity: CompletionIdentity, outcome: TurnOutcome, usage: Usage, degradationTier: string): Record<string, unknown> {
  const calls = outcome.tool_calls ?? [];
  const message: Record<string, unknown> = { role: "assistant", content: calls.length > 0 && outcome.response === "" ? null : outcome.response, refusal: null };
  if (calls.length > 0) message.tool_calls = openAiToolCalls(calls);
  if (outcome.reasoning !== undefined && outcome.reasoning !== "") message.reasoning_content = outcome.reasoning;
  return {
    id: identity.id,
    object: "chat.completion",
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: outcome.finish_reason }],
    usage,
    local_ai: localAiObject(outcome, degradationTier),
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

/** `stream_options.include_usage`: the extra last chunk with empty choices, as OpenAI sends it. */
export function usageChunk(identity: CompletionIdentity, usage: Usage): Record<string, unknown> {
  return { id: identity.id, object: "chat.completion.chunk", created: identity.created, model: identity.model, choices: [], usage };
}
