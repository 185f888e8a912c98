import type { AgentEvent } from "../../agent/events.js";
import { toEventFields } from "../../wire/agent-event-fields.js";
import { dataFrame, namedFrame } from "../sse/sse-frames.js";
import { assignCompletionId, chunkObject, progressChunk, textChunkJson, type CompletionIdentity } from "./completion.js";

/** OpenAI's end of stream (chat and text completions; other dialects end otherwise). */
export const DONE_FRAME = "data: [DONE]\n\n";

export interface FrameContext {
  identity: CompletionIdentity;
  /** true: the seed 001 stream (named AgentLoop events too); false: standard OpenAI chunks only. */
  events: boolean;
  /** `return_progress`: when the current step started (performance.now()), for `prompt_progress.time_ms`; null: not asked. */
  progress: { stepStartedAt: number } | null;
  /** The role chunk that opens the stream was sent (at run_start). */
  announced?: boolean;
}

/**
 * The one place AgentEvents become HTTP SSE frames. The default stream carries only what OpenAI
 * clients understand (text deltas as chunks); the opt-in stream adds every event under its stdio
 * name with the stdio fields (toEventFields). The switch ends in `never`: a new event is a
 * compile error here until it is mapped.
 */
export function framesFor(event: AgentEvent, ctx: FrameContext): string[] {
  const named = ctx.events ? [namedFrame(event.event, toEventFields(event).fields)] : [];
  switch (event.event) {
    case "run_start":
      // The completion id comes from the trace id, known from here on: the role chunk opens the stream.
      assignCompletionId(ctx.identity, event.trace_id);
      ctx.announced = true;
      return [...named, dataFrame(chunkObject(ctx.identity, { role: "assistant", content: "" }))];
    case "llm_chunk":
      return [...named, dataFrame(textChunkJson(ctx.identity, "content", event.delta))];
    case "llm_start":
      if (ctx.progress !== null) ctx.progress.stepStartedAt = performance.now();
      return named;
    // llama-server's `return_progress` form: a chunk without choices (clients that do not ask never see it).
    case "prompt_progress":
      if (ctx.progress === null) return named;
      return [...named, dataFrame(progressChunk(ctx.identity, event, Math.round(performance.now() - ctx.progress.stepStartedAt)))];
    case "thinking_chunk":
      // The field llama-server, vLLM and DeepSeek use; clients that do not know it ignore it.
      return [...named, dataFrame(textChunkJson(ctx.identity, "reasoning_content", event.delta))];
    // Usage comes with the turn's outcome (the final chunks, the result). Tool activity and loop
    // bookkeeping have no standard chunk form: opt-in stream only.
    case "usage":
    case "memory_start":
    case "llm_done":
    case "tool_start":
    case "tool_progress":
    case "tool_done":
    case "final":
    case "loop_abort":
    case "model_load":
    case "tools_changed":
    case "elicitation_request":
      return named;
    default: {
      const unreachable: never = event;
      throw new Error(`unmapped agent event ${JSON.stringify(unreachable)}`);
    }
  }
}
