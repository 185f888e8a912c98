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
    case "prompt_progress":
    case "llm_chunk":
    case "thinking_chunk":
    case "llm_done":
    case "usage":
    case "loop_abort":
    case "model_load":
    case "tools_changed":
      return { name, fields };
    // The fields added for ACP (call ids, full output, finish reason) are not part of seed 000's events.
    case "tool_start":
    case "tool_progress":
    case "tool_done":
    case "final":
    case "elicitation_request":
      return { name, fields: withoutExtras(fields) };
    default: {
      const unreachable: never = event;
      throw new Error(`unmapped agent event ${JSON.stringify(unreachable)}`);
    }
  }
}

function withoutExtras(fields: Record<string, unknown>): Record<string, unknown> {
  const { call_id: _callId, output: _output, finish_reason: _finish, ...kept } = fields;
  return kept;
}
