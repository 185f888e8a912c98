import type { ChatMessage, ToolCall } from "../shared/conversation/chat-message.js";
import type { ElicitationRequest } from "../tools/tool-types.js";
import type { EmitEvent, FinalFinishReason, LoopAbortReason } from "./events.js";

/**
 * Why a turn that ran to an end stopped. A turn that is cancelled or fails does not end with an
 * outcome: it rejects with a RuntimeError (code `cancelled`, or the failure's code), as always.
 * - `stop`: the model answered without calling a tool.
 * - `length`: the last model step was cut by max_tokens (the answer is partial).
 * - `content_filter`: the upstream refused (openai engine); OpenAI-shaped front doors say `stop`.
 * - `tool_calls`: the model called the client's own tools (`tool_calls`); the client runs them.
 * - `paused`: a tool needs approval (`pending_approval`), or a running call's server asks the user (`pending_elicitation`); in session mode the checkpoint waits
 *   for `resume: true`, a stateless turn cannot pause and the call was not run.
 * - `aborted`: the loop gave up (`abort_reason`: `max_steps` or `parse_errors`); `response` is
 *   the last step's text.
 */
export type TurnFinishReason = FinalFinishReason | "tool_calls" | "paused" | "aborted";

/** Tokens of every model step of the turn, summed; `null` where no engine reported the figure. */
export interface TurnUsage {
  input_tokens: number;
  /** Prompt tokens served from the KV cache (part of input_tokens). */
  cached_input_tokens: number | null;
  output_tokens: number;
  /** No engine reports reasoning tokens separately today: null. */
  reasoning_tokens: number | null;
  /** Time the engines took to read the steps' prompts (ms, summed); null where no engine said. */
  prompt_ms: number | null;
}

export interface PendingApproval {
  tool: string;
  args: Record<string, unknown>;
}

/** The one result of `SessionRunner.runTurn` and `runStateless`, which every front door maps to its wire. */
export interface TurnOutcome {
  finish_reason: TurnFinishReason;
  /** Only with finish_reason `aborted`. */
  abort_reason?: LoopAbortReason;
  /** Only with finish_reason `paused`: the call that waits for approval. */
  pending_approval?: PendingApproval;
  /** Only with finish_reason `paused` (session turns of stdio v1, JSON-RPC, HTTP): the server's question the turn waits on. */
  pending_elicitation?: ElicitationRequest;
  /** Only with finish_reason `stop`: the request's stop string that ended the text, where the engine says which (embedded). */
  stop_sequence?: string;
  /** Only with finish_reason `tool_calls`: the client's tools the model called. */
  tool_calls?: ToolCall[];
  /** The last model step's text (empty when paused). */
  response: string;
  /** Every step's reasoning (thinking) text, in order; empty when the model did not think. */
  reasoning: string;
  usage: TurnUsage;
  /** null for a conversation the client keeps (nothing stored). */
  session_id: string | null;
  /**
   * Stateless turns only: the messages the turn added to the conversation (every step's calls and
   * tool results, the last answer), for a front door that stores the conversation (Responses).
   */
  turn_messages?: ChatMessage[];
  trace_id: string;
  warnings: string[];
}

/** A turn of a stored session: it always has its session id. */
export type SessionTurnOutcome = TurnOutcome & { session_id: string };

/** The turn's facts that only its events carry (usage, reasoning), summed while it runs. */
export class TurnTally {
  private inputTokens = 0;
  private outputTokens = 0;
  private cached: number | null = null;
  private promptMs: number | null = null;
  private thinking = "";
  private counted = false;

  /** `emit` that also counts: the front door's sink still gets every event. */
  wrap(emit: EmitEvent): EmitEvent {
    return (event) => {
      if (event.event === "usage") {
        this.counted = true;
        this.inputTokens += event.input_tokens;
        this.outputTokens += event.output_tokens;
        if (event.cached_input_tokens !== undefined) this.cached = (this.cached ?? 0) + event.cached_input_tokens;
        if (event.prompt_ms !== undefined) this.promptMs = (this.promptMs ?? 0) + event.prompt_ms;
      } else if (event.event === "thinking_chunk") {
        this.thinking += event.delta;
      }
      emit(event);
    };
  }

  get usage(): TurnUsage {
    return { input_tokens: this.inputTokens, cached_input_tokens: this.cached, output_tokens: this.outputTokens, reasoning_tokens: null, prompt_ms: this.promptMs };
  }

  /** True once a step reported usage (a turn that failed before its first step has none to count). */
  get reported(): boolean {
    return this.counted;
  }

  get reasoning(): string {
    return this.thinking;
  }
}
