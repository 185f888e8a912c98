import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import type { ChatMessage, ContentPart } from "../shared/conversation/chat-message.js";
import { textContent } from "./acp-updates.js";
import { toolDisplay } from "./tool-display.js";

/**
 * A stored conversation as the `session/update`s `session/load` replays: the user's messages,
 * the agent's answers, and each tool call once, with its final status and output. Memory notes
 * (a message's `preamble`) were for the model, not the user, and are not replayed.
 */
export function historyUpdates(messages: readonly ChatMessage[], cwd: string): SessionUpdate[] {
  const results = new Map<string, Extract<ChatMessage, { role: "tool" }>>();
  for (const message of messages) if (message.role === "tool") results.set(message.tool_call_id, message);
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
        for (const content of userBlocks(message.content)) updates.push({ sessionUpdate: "user_message_chunk", content });
        break;
      case "assistant":
        if (message.content !== "") updates.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: message.content } });
        for (const call of message.tool_calls ?? []) {
          const args = parseArgs(call.arguments);
          const display = toolDisplay(call.name, args, cwd);
          const result = results.get(call.id);
          updates.push({
            sessionUpdate: "tool_call",
            toolCallId: call.id,
            title: display.title,
            kind: display.kind,
            locations: display.locations,
            rawInput: args,
            // A call without a result belongs to a turn that never finished; history holds none.
            status: result === undefined ? "failed" : result.is_error === true ? "failed" : "completed",
            content: textContent(result?.content ?? ""),
          });
        }
        break;
      case "system":
      case "tool":
        break;
      default: {
        const unreachable: never = message;
        throw new Error(`unknown message ${JSON.stringify(unreachable)}`);
      }
    }
  }
  return updates;
}

function userBlocks(content: string | ContentPart[]): ContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return content.map((part): ContentBlock => {
    if (part.type === "text") return { type: "text", text: part.text };
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.image_url.url);
    return data === null ? { type: "resource_link", name: "image", uri: part.image_url.url } : { type: "image", mimeType: data[1] as string, data: data[2] as string };
  });
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
