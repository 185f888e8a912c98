import type { ChatMessage, ToolCall } from "../../shared/conversation/chat-message.js";
import type { IndexedItem } from "./input-mapping.js";
import { itemId, outputText, type ResponseIdentity, type ResponseObject } from "./response-object.js";
import type { StoredResponse } from "./response-store.js";

/** What the store keeps of a finished response (see StoredResponse). */
export interface RecordParts {
  identity: ResponseIdentity;
  response: ResponseObject;
  inputItems: readonly IndexedItem[];
  context: readonly ChatMessage[];
  /** The client tool calls as the model made them (offered names), for the conversation. */
  toolCalls: readonly ToolCall[];
  /** What the turn added to the conversation (steps, tool results), where the turn says. */
  turnMessages: readonly ChatMessage[] | undefined;
  /** The turn paused at an MCP call awaiting approval. */
  pendingApproval: { id: string; call_id: string } | undefined;
  cacheKey: string;
  /** The name of the key that asked for it: the one (with the operator) that may read it back. */
  owner: string;
}

export function responseRecord(parts: RecordParts): StoredResponse {
  const text = outputText(parts.response.output);
  const answer: ChatMessage = parts.toolCalls.length > 0 ? { role: "assistant", content: text, tool_calls: [...parts.toolCalls] } : { role: "assistant", content: text };
  return {
    version: 2,
    owner: parts.owner,
    item_key: parts.identity.key,
    response: parts.response,
    input_items: parts.inputItems.map(({ item }, n) => listedItem(item, item.id ?? itemId(parts.identity, "in", n))),
    context: [...parts.context, ...(parts.turnMessages ?? [answer])],
    cache_key: parts.cacheKey,
    ...(parts.pendingApproval === undefined ? {} : { pending_approval: parts.pendingApproval }),
  };
}

/** An input item as GET .../input_items lists it: with an id and a status; message text as parts. */
function listedItem(item: IndexedItem["item"], id: string): Record<string, unknown> & { id: string } {
  if (item.type === "reasoning") return { ...item, id };
  if (item.type !== "message" && item.type !== undefined) return { ...item, id, status: "completed" };
  const partType = item.role === "assistant" ? "output_text" : "input_text";
  const content = typeof item.content === "string" ? [{ type: partType, text: item.content, ...(partType === "output_text" ? { annotations: [] } : {}) }] : item.content;
  return { ...item, type: "message", id, content, status: "completed" };
}
