import type { AgentEvent } from "../agent/events.js";
import { toRuntimeError } from "../shared/runtime-error.js";
import type { PendingCall, PodErrorCode, PodEvent } from "./pod-event-types.js";

/**
 * THE one AgentEvent -> Pod event mapping. One mapper lives for one turn (a resumed turn gets a
 * new one that knows the paused call): it accumulates the step's text for `text_done` and gives
 * tool calls ids (`call_<turn>_<n>`), since AgentEvents carry neither.
 */
export class PodEventMapper {
  private text = "";
  private thinking = "";
  private calls = 0;
  /** The call whose `tool_start` came and whose `tool_done` has not (calls run one at a time). */
  private open: { id: string; name: string } | null = null;

  constructor(
    private readonly turn: number,
    /** Resuming: the call that waited for approval; its `tool_start`/`tool_done` reuse its id. */
    private awaiting: PendingCall | null = null,
    firstCall = 0,
  ) {
    this.calls = firstCall;
  }

  /** How many call ids this turn has used (a resumed turn continues the count). */
  get callCount(): number {
    return this.calls;
  }

  map(event: AgentEvent): PodEvent[] {
    switch (event.event) {
      case "run_start":
      case "memory_start":
      case "final":
        // turn_start/turn_end come from the pod's state machine; `final` repeats text_done.
        return [];
      case "llm_start":
        this.text = "";
        this.thinking = "";
        return [];
      case "llm_chunk":
        this.text += event.delta;
        // Text after reasoning closes the thinking block.
        return [...this.closeThinking(), { event: "text_delta", data: { text: event.delta } }];
      case "thinking_chunk":
        this.thinking += event.delta;
        return [{ event: "thinking_delta", data: { text: event.delta } }];
      case "llm_done": {
        const out = this.closeThinking();
        if (this.text !== "") out.push({ event: "text_done", data: { text: this.text } });
        this.text = "";
        return out;
      }
      case "tool_start":
        return this.toolStart(event.tool, event.args);
      case "tool_done":
        return this.toolDone(event);
      case "usage":
        return [{ event: "usage", data: { input_tokens: event.input_tokens, output_tokens: event.output_tokens } }];
      case "loop_abort":
        return [{ event: "error", data: { code: "internal", message: `the turn stopped early: ${event.reason === "max_steps" ? "the step limit (app.max_steps) was reached" : "too many invalid tool calls (app.max_parse_errors)"}`, reason: event.reason } }];
      // The Pod vocabulary has no load or prompt-reading event: the turn simply starts later.
      // Nor a tools event: the Pod's clients see calls, not the list the model is offered (or progress).
      // Pod turns cannot answer a server's question either: it is declined (docs/tools.md).
      case "model_load":
      case "prompt_progress":
      case "tools_changed":
      case "tool_progress":
      case "elicitation_request":
        return [];
      default: {
        const unreachable: never = event;
        throw new Error(`unmapped agent event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** The call a paused turn waits on, announced at the pause (its args come with the turn result). */
  pendingCall(name: string, args: unknown): { pending: PendingCall; events: PodEvent[] } {
    const pending: PendingCall = { id: this.nextId(), name, arguments: JSON.stringify(args) };
    return { pending, events: announce(pending) };
  }

  private toolStart(name: string, args: unknown): PodEvent[] {
    if (this.awaiting !== null && this.awaiting.name === name) {
      // The approved call was announced when the turn paused: only its result is new.
      this.open = { id: this.awaiting.id, name };
      this.awaiting = null;
      return [];
    }
    const call: PendingCall = { id: this.nextId(), name, arguments: JSON.stringify(args) };
    this.open = { id: call.id, name };
    return announce(call);
  }

  private toolDone(event: Extract<AgentEvent, { event: "tool_done" }>): PodEvent[] {
    if (event.status === "approval_required") return [];
    const isError = event.status !== "ok";
    const result = (id: string): PodEvent => ({ event: "tool_result", data: { id, output: event.preview, is_error: isError } });
    if (this.open !== null && this.open.name === event.tool) {
      const { id } = this.open;
      this.open = null;
      // A tool that ran and failed is also reported as tool_error; the turn goes on (the model sees it).
      const failed: PodEvent[] = event.status === "error" || event.status === "timeout" ? [{ event: "error", data: { code: "tool_error", message: `${event.tool}: ${event.preview}` } }] : [];
      return [result(id), ...failed];
    }
    if (this.awaiting !== null && this.awaiting.name === event.tool) {
      // Declined on resume: the announced call gets its (error) result.
      const { id } = this.awaiting;
      this.awaiting = null;
      return [result(id)];
    }
    // A call that never started (invalid arguments, unknown tool): announced with its error result.
    const id = this.nextId();
    return [{ event: "tool_call_start", data: { id, name: event.tool } }, result(id)];
  }

  private closeThinking(): PodEvent[] {
    if (this.thinking === "") return [];
    const text = this.thinking;
    this.thinking = "";
    return [{ event: "thinking_done", data: { text } }];
  }

  private nextId(): string {
    this.calls++;
    return `call_${this.turn}_${this.calls}`;
  }
}

/** Our engines hand over a call whole: one args delta carries the complete JSON. */
function announce(call: PendingCall): PodEvent[] {
  return [
    { event: "tool_call_start", data: { id: call.id, name: call.name } },
    { event: "tool_call_args_delta", data: { id: call.id, json: call.arguments } },
    { event: "tool_call_done", data: { id: call.id, name: call.name, arguments: call.arguments } },
  ];
}

/** RuntimeError codes -> the seed's error codes, in one place. */
export function podErrorFor(error: unknown): { code: PodErrorCode; message: string } {
  const runtime = toRuntimeError(error);
  const code: PodErrorCode = (() => {
    switch (runtime.code) {
      case "engine_unavailable":
      case "engine_error":
      case "engine_auth":
      case "model_missing":
      case "binary_missing":
      case "model_plan_error":
      case "model_too_large":
        return "provider_error";
      default:
        return "internal";
    }
  })();
  return { code, message: runtime.message };
}
