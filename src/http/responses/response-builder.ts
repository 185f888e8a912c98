import { promptTimings, type PromptTimings } from "../../wire/prompt-timings.js";
import type { AgentEvent } from "../../agent/events.js";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import type { ToolCall } from "../../shared/conversation/chat-message.js";
import { onContentEvent, type ContentEvents } from "../responder/content-events.js";
import {
  itemId,
  responseObject,
  usageObject,
  type FunctionCallOutputItem,
  type ItemPrefix,
  type MessageOutputItem,
  type OutputItem,
  type ReasoningOutputItem,
  type ResponseIdentity,
  type ResponseObject,
  type ResponseStatus,
} from "./response-object.js";
import { McpItemTracker, type McpApprovalRequestItem, type McpItemContext } from "./mcp-items.js";

/** One server-sent event of the Responses stream (its `type` is the SSE event name). */
export type ResponseEvent = { type: string; sequence_number: number } & Record<string, unknown>;

type OpenItem = { kind: "reasoning"; item: ReasoningOutputItem; index: number } | { kind: "message"; item: MessageOutputItem; index: number };

/**
 * The one place AgentEvents become Responses output items and stream events. Non-stream requests
 * use it too (with a sink that drops the events), so both carry the same items. Reasoning and
 * text each open an item that stays open while the same kind keeps coming; a switch of kind or a
 * new model step closes it. Client tool calls arrive whole at the end of the turn and are sent as
 * one arguments delta each (our engines hand a call over complete).
 */
export class ResponseBuilder {
  private sequence = 0;
  private readonly output: OutputItem[] = [];
  private open: OpenItem | null = null;
  private items = 0;
  private prompt = 0;
  private completion = 0;
  private cached: number | null = null;
  private traceId: string | null = null;
  /** What reading the prompt cost, known at the finish. */
  private timings: PromptTimings | undefined;
  /** The request's MCP servers' items (lists, calls, the approval request). */
  readonly mcp: McpItemTracker;
  private approval: McpApprovalRequestItem | null = null;

  constructor(
    private readonly identity: ResponseIdentity,
    private readonly sink: (event: ResponseEvent) => void,
    private readonly namespaced: ReadonlyMap<string, { namespace: string; name: string }>,
    private readonly degradationTier: () => string,
    private readonly warnings: readonly string[],
    mcp: McpItemContext = { origin: () => undefined },
  ) {
    this.mcp = new McpItemTracker(
      {
        add: (item) => {
          this.close("completed");
          return this.addItem(item);
        },
        emit: (type, fields) => this.emit(type, fields),
        id: (prefix) => this.nextId(prefix),
      },
      mcp,
    );
  }

  /** `response.created` and `response.in_progress`. */
  start(): void {
    const snapshot = this.snapshot("in_progress", []);
    this.emit("response.created", { response: snapshot });
    this.emit("response.in_progress", { response: snapshot });
  }

  /**
   * A `response.in_progress` (the response as in `response.created`) for a quiet stream: a long
   * prompt being read, a model loading. Returned, not sent: the stream's keep-alive sends it.
   */
  heartbeat(): ResponseEvent {
    return { type: "response.in_progress", sequence_number: this.sequence++, response: this.snapshot("in_progress", []) };
  }

  onAgentEvent(event: AgentEvent): void {
    if (onContentEvent(event, this.contentEvents)) return;
    switch (event.event) {
      case "tool_start":
      case "tool_done":
        this.mcp.onToolEvent(event);
        break;
      case "usage":
        this.prompt += event.input_tokens;
        this.completion += event.output_tokens;
        if (event.cached_input_tokens !== undefined) this.cached = (this.cached ?? 0) + event.cached_input_tokens;
        break;
      default:
        break;
    }
  }

  private readonly contentEvents: ContentEvents = {
    traced: (traceId) => (this.traceId = traceId),
    stepStarted: () => this.close("completed"),
    thinking: (delta) => this.reasoningDelta(delta),
    text: (delta) => this.textDelta(delta),
  };

  /** Closes what is open and adds the client tool calls; `announce` sends the last event (after the store has it). */
  finish(outcome: TurnOutcome): ResponseObject {
    this.traceId = outcome.trace_id;
    // The turn's own sums are the figures (the events carried the same ones).
    const { usage } = outcome;
    [this.prompt, this.completion, this.cached] = [usage.input_tokens, usage.output_tokens, usage.cached_input_tokens];
    const cut = outcome.finish_reason === "length";
    this.close(cut ? "incomplete" : "completed");
    for (const call of outcome.tool_calls ?? []) this.functionCall(call);
    const pending = outcome.finish_reason === "paused" ? outcome.pending_approval : undefined;
    if (pending !== undefined) this.approval = this.mcp.approvalRequest(pending.tool, pending.args);
    this.timings = promptTimings(usage);
    return this.snapshot(cut ? "incomplete" : "completed", this.output, [...outcome.warnings, ...endingWarnings(outcome)]);
  }

  /** The approval request this response ends with (a paused turn), for the store. */
  approvalRequest(): McpApprovalRequestItem | null {
    return this.approval;
  }

  /** `response.completed` or `response.incomplete`. */
  announce(response: ResponseObject): void {
    this.emit(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response });
  }

  /** A turn that failed after the stream started: `response.failed` with what was produced so far. */
  fail(message: string): ResponseObject {
    this.close("incomplete");
    const response = this.snapshot("failed", this.output, [], message);
    this.emit("response.failed", { response });
    return response;
  }

  private snapshot(status: ResponseStatus, output: readonly OutputItem[], extraWarnings: readonly string[] = [], error?: string): ResponseObject {
    const usage = status === "in_progress" ? null : usageObject(this.prompt, this.completion, this.cached);
    return responseObject(this.identity, {
      status,
      output: structuredClone([...output]),
      usage,
      ...(error === undefined ? {} : { error }),
      local: { ...(this.identity.requestId === undefined ? {} : { request_id: this.identity.requestId }), trace_id: this.traceId, warnings: [...this.warnings, ...extraWarnings], degradation_tier: this.degradationTier(), ...(this.timings === undefined ? {} : { timings: this.timings }) },
    });
  }

  private emit(type: string, fields: Record<string, unknown>): void {
    this.sink({ type, sequence_number: this.sequence++, ...fields });
  }

  private nextId(prefix: ItemPrefix): string {
    return itemId(this.identity, prefix, this.items++);
  }

  private addItem(item: OutputItem): number {
    const index = this.output.length;
    this.output.push(item);
    this.emit("response.output_item.added", { output_index: index, item: structuredClone(item) });
    return index;
  }

  private reasoningDelta(delta: string): void {
    if (this.open?.kind !== "reasoning") {
      this.close("completed");
      const item: ReasoningOutputItem = { type: "reasoning", id: this.nextId("rs"), summary: [], content: [], status: "in_progress" };
      const index = this.addItem(item);
      item.content.push({ type: "reasoning_text", text: "" });
      this.emit("response.content_part.added", { item_id: item.id, output_index: index, content_index: 0, part: { type: "reasoning_text", text: "" } });
      this.open = { kind: "reasoning", item, index };
    }
    const { item, index } = this.open;
    const part = item.content[0]!;
    part.text += delta;
    this.emit("response.reasoning_text.delta", { item_id: item.id, output_index: index, content_index: 0, delta });
  }

  private textDelta(delta: string): void {
    if (this.open?.kind !== "message") {
      this.close("completed");
      const item: MessageOutputItem = { type: "message", id: this.nextId("msg"), role: "assistant", status: "in_progress", content: [] };
      const index = this.addItem(item);
      item.content.push({ type: "output_text", text: "", annotations: [], logprobs: [] });
      this.emit("response.content_part.added", { item_id: item.id, output_index: index, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
      this.open = { kind: "message", item, index };
    }
    const { item, index } = this.open;
    const part = item.content[0]!;
    part.text += delta;
    this.emit("response.output_text.delta", { item_id: item.id, output_index: index, content_index: 0, delta, logprobs: [] });
  }

  private close(status: "completed" | "incomplete"): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    const { item, index } = open;
    item.status = status;
    const at = { item_id: item.id, output_index: index, content_index: 0 };
    if (open.kind === "reasoning") {
      const part = open.item.content[0]!;
      this.emit("response.reasoning_text.done", { ...at, text: part.text });
      this.emit("response.content_part.done", { ...at, part: { ...part } });
    } else {
      const part = open.item.content[0]!;
      this.emit("response.output_text.done", { ...at, text: part.text, logprobs: [] });
      this.emit("response.content_part.done", { ...at, part: structuredClone(part) });
    }
    this.emit("response.output_item.done", { output_index: index, item: structuredClone(item) });
  }

  private functionCall(call: ToolCall): void {
    const target = this.namespaced.get(call.name);
    const item: FunctionCallOutputItem = {
      type: "function_call",
      id: this.nextId("fc"),
      call_id: call.id,
      name: target?.name ?? call.name,
      arguments: "",
      status: "in_progress",
      ...(target === undefined ? {} : { namespace: target.namespace }),
    };
    const index = this.addItem(item);
    item.arguments = call.arguments;
    this.emit("response.function_call_arguments.delta", { item_id: item.id, output_index: index, delta: call.arguments });
    this.emit("response.function_call_arguments.done", { item_id: item.id, output_index: index, name: item.name, arguments: call.arguments });
    item.status = "completed";
    this.emit("response.output_item.done", { output_index: index, item: structuredClone(item) });
  }
}

/** Endings the Response object has no status for are completed responses that say why in `local_ai.warnings`. */
function endingWarnings(outcome: TurnOutcome): string[] {
  if (outcome.finish_reason === "content_filter") return ["the upstream withheld or cut the answer (content_filter)"];
  return [];
}
