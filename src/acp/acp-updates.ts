import type { SessionUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { AgentEvent, ApprovalRequest, ToolStatus } from "../agent/events.js";
import { toolDisplay } from "./tool-display.js";

/**
 * THE one AgentEvent -> ACP `session/update` mapping. One lives for one prompt turn: it gives the
 * turn's message chunks a `messageId` per model step, and remembers which tool calls the editor
 * already knows (a gated call is announced before `session/request_permission`, so its
 * `tool_start` only moves it on). The switch ends in `never`: a new event is a compile error here.
 */
export class AcpTurnUpdates {
  private traceId = "turn";
  private readonly announced = new Set<string>();
  private calls = 0;
  /** The call between its tool_start and tool_done (calls run one at a time). */
  private open: string | null = null;

  constructor(
    private readonly cwd: string,
    /** The model's context window (`usage_update.size`); null: usage is not reported. */
    private readonly contextSize: (() => number) | null,
    /** The editor advertised `session.notices` (notices may be sent). */
    private readonly notices = false,
    /** False: the session's thinking is off, and what the model still thinks is not shown. */
    private readonly showThinking = true,
  ) {}

  map(event: AgentEvent): SessionUpdate[] {
    switch (event.event) {
      case "run_start":
        this.traceId = event.trace_id;
        return [];
      case "memory_start":
      case "llm_start":
      case "llm_done":
      case "final":
      case "loop_abort":
        // The prompt's response carries how the turn ended (stopReason).
        return [];
      case "llm_chunk":
        return [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.delta }, messageId: `${this.traceId}-${event.step}` }];
      case "thinking_chunk":
        if (!this.showThinking) return [];
        return [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.delta }, messageId: `${this.traceId}-${event.step}-thought` }];
      case "usage":
        if (this.contextSize === null) return [];
        return [{ sessionUpdate: "usage_update", used: event.input_tokens + event.output_tokens, size: this.contextSize() }];
      case "tool_start": {
        const id = this.idOf(event.call_id);
        this.open = id;
        if (this.announced.has(id)) return [{ sessionUpdate: "tool_call_update", toolCallId: id, status: "in_progress" }];
        this.announced.add(id);
        return [{ sessionUpdate: "tool_call", ...this.describe(id, event.tool, event.args), status: "pending" }, { sessionUpdate: "tool_call_update", toolCallId: id, status: "in_progress" }];
      }
      // ACP has no progress field: the running call's content shows the latest report (tool_done replaces it).
      case "tool_progress": {
        const id = event.call_id ?? this.open;
        if (id === null) return [];
        return [{ sessionUpdate: "tool_call_update", toolCallId: id, content: textContent(progressText(event)) }];
      }
      case "tool_done": {
        const id = event.call_id ?? this.open ?? this.idOf(undefined);
        this.open = null;
        const final = { status: statusOf(event.status), content: textContent(event.output ?? event.preview) };
        if (this.announced.has(id)) return [{ sessionUpdate: "tool_call_update", toolCallId: id, ...final }];
        // A call that never started (invalid arguments, an unknown tool): shown with its outcome.
        this.announced.add(id);
        return [{ sessionUpdate: "tool_call", ...this.describe(id, event.tool, undefined), ...final }];
      }
      // ACP has no load notice: a one-entry plan is the status line editors show (docs/acp.md).
      case "model_load":
        return [{ sessionUpdate: "plan", entries: [{ content: modelLoadText(event), priority: "high", status: event.state === "loaded" ? "completed" : event.state === "loading" ? "in_progress" : "pending" }] }];
      // Reading a long prompt: the same one-entry plan, so the editor shows how far it got.
      case "prompt_progress":
        return [{ sessionUpdate: "plan", entries: [{ content: promptProgressText(event), priority: "high", status: event.processed >= event.total ? "completed" : "in_progress" }] }];
      // ACP has no update for the model's tool list: an editor that takes notices gets one
      // (docs/acp.md); prompts are commands (available_commands_update, re-sent by the turn).
      case "tools_changed":
        if (!this.notices) return [];
        return [{ sessionUpdate: "notice", severity: "info", title: `MCP server ${event.server} changed its tools`, description: event.tools.length === 0 ? "It offers no tools now." : `Tools now: ${event.tools.join(", ")}` }];
      // Asked through the ACP client when it can (acp-elicitation.ts); nothing to show here.
      case "elicitation_request":
        return [];
      default: {
        const unreachable: never = event;
        throw new Error(`unmapped agent event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** A gated call, announced before the editor is asked: the update to send, and the permission's `toolCall`. */
  permission(request: ApprovalRequest): { updates: SessionUpdate[]; toolCall: ToolCallUpdate } {
    const id = request.call_id;
    const described = this.describe(id, request.tool, request.args);
    const updates: SessionUpdate[] = this.announced.has(id) ? [] : [{ sessionUpdate: "tool_call", ...described, status: "pending" }];
    this.announced.add(id);
    return { updates, toolCall: described };
  }

  private describe(id: string, tool: string, args: unknown): { toolCallId: string; title: string; kind: ReturnType<typeof toolDisplay>["kind"]; locations: ReturnType<typeof toolDisplay>["locations"]; rawInput?: unknown } {
    const display = toolDisplay(tool, args, this.cwd);
    return { toolCallId: id, title: display.title, kind: display.kind, locations: display.locations, ...(args === undefined ? {} : { rawInput: args }) };
  }

  /** Engines give every call an id; a missing one (never expected) still gets a unique one. */
  private idOf(callId: string | undefined): string {
    return callId ?? `${this.traceId}-call-${++this.calls}`;
  }
}

/** "at 2 (2/3)", "2/3", "2" (progress and total as the server reported them). */
export function progressText(event: Extract<AgentEvent, { event: "tool_progress" }>): string {
  const figure = event.total === undefined ? `${event.progress}` : `${event.progress}/${event.total}`;
  return event.message === undefined || event.message === "" ? figure : `${event.message} (${figure})`;
}

/** "Waiting for memory to load model coder (unloading chat)", "Loading model coder (40 %)", "Loaded model coder". */
export function modelLoadText(event: Extract<AgentEvent, { event: "model_load" }>): string {
  switch (event.state) {
    case "queued":
      return `Waiting for memory to load model ${event.model}${event.unloading !== undefined && event.unloading.length > 0 ? ` (unloading ${event.unloading.join(", ")})` : ""}`;
    case "loading":
      return `Loading model ${event.model}${event.progress === undefined ? "" : ` (${Math.round(event.progress * 100)} %)`}`;
    case "loaded":
      return `Loaded model ${event.model}`;
  }
}

/** "Reading the prompt: 45 % (4,500 of 10,000 tokens; 1,200 cached)". */
export function promptProgressText(event: Extract<AgentEvent, { event: "prompt_progress" }>): string {
  const percent = event.total === 0 ? 100 : Math.floor((event.processed / event.total) * 100);
  const cached = event.cached > 0 ? `; ${event.cached.toLocaleString("en-US")} cached` : "";
  return `Reading the prompt: ${percent} % (${event.processed.toLocaleString("en-US")} of ${event.total.toLocaleString("en-US")} tokens${cached})`;
}

export function statusOf(status: ToolStatus): ToolCallStatus {
  return status === "ok" ? "completed" : "failed";
}

export function textContent(text: string): ToolCallContent[] {
  return text === "" ? [] : [{ type: "content", content: { type: "text", text } }];
}
