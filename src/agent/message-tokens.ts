import { contentText, type ChatMessage } from "../shared/conversation/chat-message.js";

/** What a chat template adds around each message (role markers, separators): a safe margin. */
const PER_MESSAGE_OVERHEAD = 8;

function messageText(message: ChatMessage): string {
  switch (message.role) {
    case "user":
      return contentText(message.content);
    case "assistant":
      return `${message.content}${(message.tool_calls ?? []).map((call) => `${call.name}${call.arguments}`).join("")}`;
    default:
      return message.content;
  }
}

/**
 * One message's tokens as the context budget counts them: its text (tool calls included) counted
 * with `count`, plus the template's overhead. The budget (context-budget.ts) and the prompt count
 * of an engine that cannot render a template ahead (stateless-prompt-count.ts) share it.
 */
export async function messageTokens(message: ChatMessage, count: (text: string) => Promise<number>): Promise<number> {
  const text = messageText(message);
  return PER_MESSAGE_OVERHEAD + (text === "" ? 0 : await count(text));
}
