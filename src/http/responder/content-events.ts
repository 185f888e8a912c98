import type { AgentEvent } from "../../agent/events.js";

/** What a dialect's builder does with the events that shape an answer's content (blocks, items). */
export interface ContentEvents {
  /** run_start: the turn's trace id (`local_ai.trace_id`). */
  traced(traceId: string): void;
  /** llm_start: a new model step closes the block or item that is open. */
  stepStarted(): void;
  thinking(delta: string): void;
  text(delta: string): void;
}

/** Hands a content event to `to`; false for any other event (the builder's own, or none). */
export function onContentEvent(event: AgentEvent, to: ContentEvents): boolean {
  if (event.event === "run_start") to.traced(event.trace_id);
  else if (event.event === "llm_start") to.stepStarted();
  else if (event.event === "thinking_chunk") to.thinking(event.delta);
  else if (event.event === "llm_chunk") to.text(event.delta);
  else return false;
  return true;
}
