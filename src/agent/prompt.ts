import { contentText, type ChatMessage, type ContentPart } from "../engine/chat-types.js";
import type { MemorySnippet } from "../store/store-types.js";

/** A deliberately rough estimate (about 3.5 characters a token): it only decides what to trim. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const message of messages) {
    chars += 8;
    if (message.role === "user") chars += contentText(message.content).length;
    else chars += message.content.length;
    if (message.role === "assistant") for (const call of message.tool_calls ?? []) chars += call.name.length + call.arguments.length + 16;
  }
  return Math.ceil(chars / 3.5);
}

/**
 * Memory snippets as a preamble of this turn's user message (in the model's context only; the
 * stored message stays as sent). They change from turn to turn, so they sit after everything that
 * stays the same: system prompt and history keep their KV cache across turns.
 */
/** What the user wrote, as text (image parts leave no text). */
export function inputText(content: string | ContentPart[]): string {
  return typeof content === "string" ? content : content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
}

export function memoryPreamble(snippets: readonly MemorySnippet[]): string | undefined {
  if (snippets.length === 0) return undefined;
  const notes = snippets.map((snippet) => `- ${snippet.text.replace(/\s+/g, " ").trim()}`).join("\n");
  return `Possibly relevant notes from earlier conversations:\n${notes}`;
}

/** The messages as the model sees them: each user message's preamble in front of its content. */
export function renderForModel(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => {
    if (message.role !== "user" || message.preamble === undefined) return message;
    const { preamble, content } = message;
    return { role: "user", content: typeof content === "string" ? `${preamble}\n\n${content}` : [{ type: "text" as const, text: preamble }, ...content] };
  });
}
