import type { TurnResult } from "../../agent/session-runner.js";

/** One turn as OpenAI objects: ids, the completion, and the chunks of its stream. */

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface LocalAiExtension {
  session_id: string;
  trace_id: string;
  warnings: string[];
  degradation_tier: string;
  pending_approval?: { tool: string; args: Record<string, unknown> };
}

/**
 * Always "stop": a turn paused for approval is an agent-internal tool call, not an OpenAI
 * function call the client should run ("tool_calls" would make clients look for tool_calls).
 * The pause is reported in `local_ai.pending_approval` and `warnings`.
 */
export const FINISH_REASON = "stop";

export class UsageTally {
  prompt = 0;
  completion = 0;
  add(input: number, output: number): void {
    this.prompt += input;
    this.completion += output;
  }
  toJSON(): Usage {
    return { prompt_tokens: this.prompt, completion_tokens: this.completion, total_tokens: this.prompt + this.completion };
  }
}

/** Shared identity of one completion: the id is fixed before the trace id is known (streams start first). */
export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

export function completionObject(identity: CompletionIdentity, result: TurnResult, usage: Usage, degradationTier: string): Record<string, unknown> {
  const local: LocalAiExtension = { session_id: result.session_id, trace_id: result.trace_id, warnings: result.warnings, degradation_tier: degradationTier };
  if (result.pending_approval !== undefined) local.pending_approval = result.pending_approval;
  return {
    id: identity.id,
    object: "chat.completion",
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, message: { role: "assistant", content: result.response, refusal: null }, logprobs: null, finish_reason: FINISH_REASON }],
    usage,
    local_ai: local,
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

/** `stream_options.include_usage`: the extra last chunk with empty choices, as OpenAI sends it. */
export function usageChunk(identity: CompletionIdentity, usage: Usage): Record<string, unknown> {
  return { id: identity.id, object: "chat.completion.chunk", created: identity.created, model: identity.model, choices: [], usage };
}
