import type { AgentEvent } from "../agent/events.js";

/**
 * The one place AgentEvents become v1 event fields (`{id, type: "event", event, ...fields}`).
 * The v1 wire carries the seed's names and fields unchanged; the exhaustive switch makes a new
 * event a compile error here until it is mapped.
 */
export function toV1EventFields(event: AgentEvent): { name: string; fields: Record<string, unknown> } {
  const { event: name, ...fields } = event;
  switch (event.event) {
    case "run_start":
    case "memory_start":
    case "llm_start":
    case "llm_chunk":
    case "thinking_chunk":
    case "llm_done":
    case "tool_start":
    case "tool_done":
    case "usage":
    case "final":
    case "loop_abort":
      return { name, fields };
    default: {
      const unreachable: never = event;
      throw new Error(`unmapped agent event ${JSON.stringify(unreachable)}`);
    }
  }
}
