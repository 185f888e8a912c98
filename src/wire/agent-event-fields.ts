import type { AgentEvent } from "../agent/events.js";

/**
 * The neutral home of the event vocabulary: an AgentEvent as seed 000 names it (`event`) and the
 * fields it carries. stdio v1 (`{id, type: "event", event, ...fields}`), JSON-RPC (`$/event`
 * params) and the HTTP opt-in event stream all send exactly these; the Pod protocol has its own
 * vocabulary (src/pod/pod-events.ts). Front doors import this, never each other. The exhaustive
 * switch makes a new event a compile error here until it is mapped.
 */
export function toEventFields(event: AgentEvent): { name: string; fields: Record<string, unknown> } {
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
