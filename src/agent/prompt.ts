import { contentText, type ChatMessage, type ContentPart } from "../shared/conversation/chat-message.js";
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

/**
 * The messages as the model sees them: each user message's preamble in front of its content; the
 * images tools returned, for a model that takes images (`images`), in one user message after the
 * step's tool results (OpenAI's tool messages carry text only), each under the call it came from.
 * Without `images` the tool results' text, which names each image, is all the model gets.
 */
export function renderForModel(messages: readonly ChatMessage[], options: { images?: boolean } = {}): ChatMessage[] {
  const rendered: ChatMessage[] = [];
  let pending: ContentPart[] = [];
  const flush = (): void => {
    if (pending.length > 0) rendered.push({ role: "user", content: pending });
    pending = [];
  };
  for (const message of messages) {
    if (message.role !== "tool") flush();
    if (message.role === "tool" && message.images !== undefined) {
      const { images, ...text } = message;
      rendered.push(text);
      if (options.images === true) pending.push({ type: "text", text: `The image${images.length === 1 ? "" : "s"} ${message.name} returned (call ${message.tool_call_id}):` }, ...images);
      continue;
    }
    if (message.role !== "user" || message.preamble === undefined) {
      rendered.push(message);
      continue;
    }
    const { preamble, content } = message;
    rendered.push({ role: "user", content: typeof content === "string" ? `${preamble}\n\n${content}` : [{ type: "text" as const, text: preamble }, ...content] });
  }
  flush();
  return rendered;
}
