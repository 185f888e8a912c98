/**
 * The one event contract for every front door (seed 000's AgentLoop event table, plus
 * `thinking_chunk` and `usage`). Each transport maps it in exactly one place; an exhaustive
 * switch ending in `never` makes a new event a compile error wherever it is not handled.
 */
import type { ElicitationAnswer, ElicitationRequest, ToolStatus } from "../tools/tool-types.js";

export type { ToolStatus } from "../tools/tool-types.js";

export type LoopAbortReason = "max_steps" | "parse_errors";

export type FinalFinishReason = "stop" | "length" | "content_filter";

export type AgentEvent =
  /** `session_id` is null for a turn kept by the client (nothing stored; HTTP without a session). */
  | { event: "run_start"; user_input: string; trace_id: string; session_id: string | null; agent: string }
  | { event: "memory_start"; snippets: number }
  | { event: "llm_start"; step: number }
  /**
   * How far the step's prompt has been read (sent only for prompts that take over a second: then at
   * most every 0.5 s, at least every 2 s): `total` the prompt's tokens, `cached` reused from the KV
   * cache, `processed` in the sequence so far (cached included, never decreasing); the last one
   * before the step's first output has `processed == total`.
   */
  | { event: "prompt_progress"; step: number; processed: number; total: number; cached: number }
  | { event: "llm_chunk"; step: number; delta: string }
  | { event: "thinking_chunk"; step: number; delta: string }
  | { event: "llm_done"; step: number }
  /**
   * `call_id` (the model's id for the call) and `output` (the text the model was given) are for
   * front doors that show a call in full (ACP); the seed 000 wires leave them out (src/wire/).
   */
  | { event: "tool_start"; step: number; tool: string; args: unknown; call_id?: string }
  /** A running tool reported progress (MCP `notifications/progress`); `total` and `message` when the tool gave them. */
  | { event: "tool_progress"; step: number; tool: string; progress: number; total?: number; message?: string; call_id?: string }
  | { event: "tool_done"; step: number; tool: string; status: ToolStatus; preview: string; retryable: boolean; ms: number; call_id?: string; output?: string }
  /**
   * `cached_input_tokens` only where the engine knows it (prompt tokens served from the KV cache);
   * `prompt_ms`: how long the engine took to read the step's prompt, where it says (embedded, llama-server).
   */
  | { event: "usage"; step: number; input_tokens: number; output_tokens: number; cached_input_tokens?: number; prompt_ms?: number }
  /** `finish_reason`: why the last step ended (`length`: max_tokens; `content_filter`: the upstream refused); not on the seed 000 wires. */
  | { event: "final"; step: number; response: string; finish_reason?: FinalFinishReason }
  | { event: "loop_abort"; step: number; reason: LoopAbortReason }
  /** The turn waits for its model: queued for memory (`unloading`: idle models being unloaded for it), loading, loaded. */
  | { event: "model_load"; step: number; model: string; state: "queued" | "loading" | "loaded"; progress?: number; unloading?: string[] }
  /**
   * An MCP server changed its tools (`notifications/tools/list_changed`): `tools` are the names
   * the model is offered from it from `step` on (the agent's patterns applied; empty: none left).
   */
  | { event: "tools_changed"; step: number; server: string; tools: string[] }
  /**
   * An MCP server asks the user for input while the tool call `call_id` runs (`elicitation/create`,
   * form mode): a front door that can ask does; otherwise the turn pauses with `pending_elicitation`.
   */
  | { event: "elicitation_request"; step: number; server: string; message: string; requested_schema: Record<string, unknown>; call_id?: string };

export type EmitEvent = (event: AgentEvent) => void;

/** What a front door is asked when a gated tool is about to run (see `ApprovalCallback`). */
export interface ApprovalRequest {
  tool: string;
  args: Record<string, unknown>;
  /** The server (config key) that provides the tool. */
  server: string;
  step: number;
  /** The model's id for this call, stable for the turn (ACP uses it as the toolCallId). */
  call_id: string;
}

/**
 * Asked mid-turn by the AgentLoop when a tool needs approval and a front door can ask its user.
 * Resolves "approve" (the tool runs) or "decline" (the model is told it was declined). Remembering
 * an "always" answer is the front door's business. Must settle when `signal` aborts.
 */
export type ApprovalCallback = (request: ApprovalRequest, signal: AbortSignal) => Promise<"approve" | "decline">;

/** What a front door is asked when a server wants the user's input mid-call (see `ElicitationCallback`). */
export interface ElicitationAsk extends ElicitationRequest {
  step: number;
  /** The call the server asks for (ACP's toolCallId). */
  call_id: string;
}

/**
 * Asked mid-turn when a server sends `elicitation/create` and a front door can ask its user.
 * Must settle when `signal` aborts (the server's wait ended: timeout, cancel); the answer is then unused.
 */
export type ElicitationCallback = (request: ElicitationAsk, signal: AbortSignal) => Promise<ElicitationAnswer>;
