import type { ChatMessage, ToolCall } from "../shared/conversation/chat-message.js";

/** The mutable state of one turn; what the L2 checkpoint stores after each step. */
export interface TurnState {
  /** This turn's messages: the user message first, then assistant and tool messages. */
  messages: ChatMessage[];
  /** The next model step to run (0-based). */
  step: number;
  parseErrors: number;
}

/** Calls of the last assistant message that have no tool result yet (resume, approval). */
export function unansweredCalls(messages: readonly ChatMessage[]): ToolCall[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as ChatMessage;
    if (message.role === "tool") continue;
    if (message.role !== "assistant") return [];
    const answered = new Set(messages.slice(i + 1).flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : [])));
    return (message.tool_calls ?? []).filter((call) => !answered.has(call.id));
  }
  return [];
}

/** A short single line for `tool_done.preview`. */
export function previewOf(text: string, max = 160): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Tool output put into the model context is capped, with a marker saying how much was cut. */
export function capToolOutput(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return text;
  const kept = Buffer.from(text).subarray(0, maxBytes).toString("utf8").replace(/\uFFFD$/, "");
  return `${kept}\n…[truncated ${bytes - Buffer.byteLength(kept)} bytes]`;
}
