import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelResponse } from "node-llama-cpp";
import { contentText, type ChatMessage } from "../../shared/conversation/chat-message.js";

/**
 * Our OpenAI-shaped messages to node-llama-cpp's chat history. A tool result is attached to the
 * function call it answers (node-llama-cpp keeps call and result together in the model response).
 */
export function toChatHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const results = new Map<string, string>();
  for (const message of messages) if (message.role === "tool") results.set(message.tool_call_id, message.content);

  const history: ChatHistoryItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        history.push({ type: "system", text: message.content });
        break;
      case "user":
        history.push({ type: "user", text: contentText(message.content) });
        break;
      case "assistant": {
        const response: ChatModelResponse["response"] = [];
        if (message.content !== "") response.push(message.content);
        for (const call of message.tool_calls ?? []) {
          const functionCall: ChatModelFunctionCall = {
            type: "functionCall",
            name: call.name,
            params: parseArguments(call.arguments),
            result: results.get(call.id) ?? "",
          };
          response.push(functionCall);
        }
        appendModelResponse(history, response);
        break;
      }
      case "tool":
        break; // attached to its call above
      default: {
        const unreachable: never = message;
        throw new Error(`unknown message ${JSON.stringify(unreachable)}`);
      }
    }
  }
  return history;
}

/**
 * generateResponse continues the last model item: after a user message that is a fresh, empty
 * one; after tool results it is the same model turn, continued past its function calls.
 */
export function withOpenModelTurn(history: ChatHistoryItem[]): ChatHistoryItem[] {
  const last = history[history.length - 1];
  if (last?.type === "model") return history;
  return [...history, { type: "model", response: [] }];
}

function appendModelResponse(history: ChatHistoryItem[], response: ChatModelResponse["response"]): void {
  const last = history[history.length - 1];
  // Consecutive assistant messages (text, then calls) are one model turn for the chat template.
  if (last?.type === "model") last.response.push(...response);
  else history.push({ type: "model", response });
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
