import { promptTimings, type PromptTimings } from "../../wire/prompt-timings.js";
import type { AgentEvent } from "../../agent/events.js";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { onContentEvent, type ContentEvents } from "../responder/content-events.js";
import { messageUsage, signatureOf, stopReasonOf, toolInput, type ContentBlock, type MessageObject, type StopReason, type TextBlock, type ThinkingBlock } from "./message-object.js";

/** One server-sent event of the Messages stream (its `type` is the SSE event name). */
export type MessageEvent = { type: string } & Record<string, unknown>;

/** How thinking is shown: `full`; `omitted` (display: "omitted": blocks with empty text); `none` (thinking disabled: no blocks). */
export type ThinkingDisplay = "full" | "omitted" | "none";

export interface MessageIdentity {
  id: string;
  /** The model name the client asked for, echoed back. */
  model: string;
  /** The HTTP request's id (X-Request-Id), echoed in `local_ai.request_id`. */
  requestId?: string | undefined;
}

/**
 * The one place AgentEvents become Messages content blocks and stream events; non-stream
 * requests use it too (with a sink that drops the events), so both carry the same blocks.
 * Thinking and text each open a block that stays open while the same kind keeps coming; a switch
 * of kind or a new model step closes it. Client tool calls arrive whole at the end of the turn:
 * each is one `tool_use` block with `input: {}` at its start and the arguments as one
 * `input_json_delta` (clients assemble the input from the deltas).
 */
export class MessageBuilder {
  private readonly content: ContentBlock[] = [];
  private open: { block: TextBlock | ThinkingBlock; index: number } | null = null;
  private traceId: string | null = null;
  /** What reading the prompt cost, known at the finish. */
  private timings: PromptTimings | undefined;
  private readonly warnings: string[];

  constructor(
    private readonly identity: MessageIdentity,
    private readonly sink: (event: MessageEvent) => void,
    private readonly thinking: ThinkingDisplay,
    private readonly degradationTier: () => string,
    warnings: readonly string[],
  ) {
    this.warnings = [...warnings];
  }

  /** `message_start` (empty content, usage not known yet), then a first `ping`, as the API sends. */
  start(): void {
    this.sink({ type: "message_start", message: this.snapshot(null, messageUsage(0, null, 0)) });
    this.sink({ type: "ping" });
  }

  onAgentEvent(event: AgentEvent): void {
    onContentEvent(event, this.contentEvents);
  }

  private readonly contentEvents: ContentEvents = {
    traced: (traceId) => (this.traceId = traceId),
    stepStarted: () => this.close(),
    thinking: (delta) => {
      if (this.thinking !== "none") this.thinkingDelta(delta);
    },
    text: (delta) => this.textDelta(delta),
  };

  /** Closes what is open, adds the client tool calls as tool_use blocks, and sends the ending. */
  finish(outcome: TurnOutcome): MessageObject {
    this.traceId = outcome.trace_id;
    this.close();
    for (const call of outcome.tool_calls ?? []) {
      const { input, valid } = toolInput(call.arguments);
      if (!valid) this.warnings.push(`the model's arguments for ${call.name} (${call.id}) are not a JSON object; sent as {}`);
      const index = this.content.length;
      this.content.push({ type: "tool_use", id: call.id, name: call.name, input, caller: { type: "direct" } });
      this.sink({ type: "content_block_start", index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {}, caller: { type: "direct" } } });
      this.sink({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: valid ? JSON.stringify(input) : "{}" } });
      this.sink({ type: "content_block_stop", index });
    }
    const { usage } = outcome;
    const totals = messageUsage(usage.input_tokens, usage.cached_input_tokens, usage.output_tokens);
    this.warnings.push(...outcome.warnings);
    this.timings = promptTimings(usage);
    const stopReason = stopReasonOf(outcome);
    const stopSequence = stopReason === "stop_sequence" ? (outcome.stop_sequence ?? null) : null;
    const message = { ...this.snapshot(stopReason, totals), stop_sequence: stopSequence };
    const { cache_creation_input_tokens, cache_read_input_tokens, input_tokens, output_tokens } = totals;
    this.sink({
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: stopSequence, stop_details: null, container: null },
      usage: { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens, output_tokens_details: null, server_tool_use: null },
      local_ai: message.local_ai,
    });
    this.sink({ type: "message_stop" });
    return message;
  }

  /** A failure after the stream started: the open block is closed and an `error` event ends the stream. */
  fail(type: "api_error" | "overloaded_error", message: string): void {
    this.close();
    this.sink({ type: "error", error: { type, message, ...requestIdField(this.identity.requestId) } });
  }

  private snapshot(stopReason: StopReason | null, usage: MessageObject["usage"]): MessageObject {
    return {
      id: this.identity.id,
      type: "message",
      role: "assistant",
      model: this.identity.model,
      content: structuredClone(this.content),
      stop_reason: stopReason,
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage,
      local_ai: { ...requestIdField(this.identity.requestId), trace_id: this.traceId, warnings: [...this.warnings], degradation_tier: this.degradationTier(), ...(this.timings === undefined ? {} : { timings: this.timings }) },
    };
  }

  private thinkingDelta(delta: string): void {
    if (this.open?.block.type !== "thinking") this.openBlock({ type: "thinking", thinking: "", signature: "" });
    const block = this.open!.block as ThinkingBlock;
    // display "omitted": the model still thinks, the text is not sent; the signature covers it all the same.
    block.signature += delta;
    if (this.thinking === "omitted") return;
    block.thinking += delta;
    this.sink({ type: "content_block_delta", index: this.open!.index, delta: { type: "thinking_delta", thinking: delta } });
  }

  private textDelta(delta: string): void {
    if (this.open?.block.type !== "text") this.openBlock({ type: "text", text: "", citations: null });
    const block = this.open!.block as TextBlock;
    block.text += delta;
    this.sink({ type: "content_block_delta", index: this.open!.index, delta: { type: "text_delta", text: delta } });
  }

  private openBlock(block: TextBlock | ThinkingBlock): void {
    this.close();
    const index = this.content.length;
    this.content.push(block);
    this.open = { block, index };
    this.sink({ type: "content_block_start", index, content_block: structuredClone(block) });
  }

  private close(): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    if (open.block.type === "thinking") {
      // The text so far was gathered in `signature`: it becomes the digest now.
      open.block.signature = signatureOf(open.block.signature);
      this.sink({ type: "content_block_delta", index: open.index, delta: { type: "signature_delta", signature: open.block.signature } });
    }
    this.sink({ type: "content_block_stop", index: open.index });
  }
}

function requestIdField(requestId: string | undefined): { request_id?: string } {
  return requestId === undefined ? {} : { request_id: requestId };
}
