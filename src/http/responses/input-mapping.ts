import type { ChatMessage, ContentPart, ToolCall } from "../../shared/conversation/chat-message.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { HttpError } from "../http-error.js";
import { parseInputItem, type InputItem, type ItemReference } from "./responses-schema.js";

/** What a refusal of an input item names, and the item as it was parsed (references resolved). */
export interface IndexedItem {
  index: number;
  item: Exclude<InputItem, ItemReference>;
}

/** Looks an item up by id in the stored responses; null when it is not (or no longer) there. */
export type ItemLookup = (id: string) => Promise<unknown>;

const isReference = (item: InputItem): item is ItemReference =>
  !("role" in item) && (item.type === "item_reference" || item.type === undefined || item.type === null);

/**
 * `input` as parsed items: a string is one user message; `item_reference`s are replaced by the
 * stored item they name (a 404 naming `input[i].id` when there is none).
 */
export async function parseInput(input: string | unknown[] | undefined, lookup: ItemLookup): Promise<IndexedItem[]> {
  if (input === undefined) return [];
  if (typeof input === "string") return [{ index: 0, item: { type: "message", role: "user", content: input } }];
  const items: IndexedItem[] = [];
  for (const [index, raw] of input.entries()) {
    const item = parseInputItem(raw, index);
    if (!isReference(item)) {
      items.push({ index, item });
      continue;
    }
    const stored = await lookup(item.id);
    if (stored === null || stored === undefined) {
      throw new HttpError("not_found", `input[${index}].id: no stored item with id ${JSON.stringify(item.id.slice(0, 80))} (it was never stored, was deleted, or expired)`, `input[${index}].id`);
    }
    const resolved = parseInputItem(stored, index);
    if (isReference(resolved)) throw new RuntimeError("invalid_request", `input[${index}].id: names a reference, not an item`, { details: { param: `input[${index}].id` } });
    items.push({ index, item: resolved });
  }
  return items;
}

export interface MappingOptions {
  /** The client's name of a function -> the name the model is offered (namespaced functions). */
  offeredName: (name: string, namespace: string | null | undefined) => string;
  /** Image parts are refused (naming the part) when the model takes none. */
  images: boolean;
  /** Calls made earlier in the conversation (the stored context): outputs may answer them. */
  earlierCalls: Iterable<ToolCall>;
}

export interface MappedInput {
  /** System and developer messages stay where they are: the agent adds them to its system prompt. */
  messages: ChatMessage[];
  warnings: string[];
}

const partsText = (parts: ReadonlyArray<{ type: string; text?: string; refusal?: string }>): string =>
  parts.map((part) => part.text ?? part.refusal ?? "").join("");

/**
 * Items in engine terms. Assistant messages and the function calls after them become one
 * assistant message with tool_calls (as chat completions carries them); a function_call_output
 * becomes a tool message and must answer a call made before it. `additional_tools` items carry
 * tools, not conversation (responses-tools.ts offers them). `reasoning` items are dropped:
 * the engines take no reasoning in earlier turns (documented; never an error).
 */
export function toMessages(items: readonly IndexedItem[], options: MappingOptions): MappedInput {
  const messages: ChatMessage[] = [];
  const warnings: string[] = [];
  const calls = new Map<string, string>();
  for (const call of options.earlierCalls) calls.set(call.id, call.name);
  let openAssistant: Extract<ChatMessage, { role: "assistant" }> | null = null;
  for (const { index, item } of items) {
    const where = `input[${index}]`;
    switch (item.type) {
      case "function_call": {
        const call: ToolCall = { id: item.call_id, name: options.offeredName(item.name, item.namespace), arguments: item.arguments };
        calls.set(call.id, call.name);
        if (openAssistant === null) {
          openAssistant = { role: "assistant", content: "", tool_calls: [] };
          messages.push(openAssistant);
        }
        openAssistant.tool_calls = [...(openAssistant.tool_calls ?? []), call];
        break;
      }
      case "function_call_output": {
        const name = calls.get(item.call_id);
        if (name === undefined) {
          throw new RuntimeError("invalid_request", `${where}.call_id: no function_call with call_id ${JSON.stringify(item.call_id.slice(0, 80))} comes before this output`, { details: { param: `${where}.call_id` } });
        }
        const content = typeof item.output === "string" ? item.output : partsText(item.output);
        messages.push({ role: "tool", tool_call_id: item.call_id, name, content });
        openAssistant = null;
        break;
      }
      case "mcp_call": {
        // An MCP call sent back (a client that keeps the conversation itself): the call and its result.
        const call: ToolCall = { id: item.id, name: item.name, arguments: item.arguments };
        messages.push({ role: "assistant", content: "", tool_calls: [call] }, { role: "tool", tool_call_id: item.id, name: item.name, content: item.output ?? item.error ?? "" });
        openAssistant = null;
        break;
      }
      case "reasoning":
      case "additional_tools": // offered with `tools` (responses-tools.ts), not a message
      case "mcp_list_tools": // the tools are listed again by this request's `mcp` tools
      case "mcp_approval_request": // answered (or not) by an mcp_approval_response (response-turn.ts)
      case "mcp_approval_response":
        break;
      default: {
        const message = item;
        const content = message.content;
        if (message.role === "system" || message.role === "developer") {
          messages.push({ role: "system", content: typeof content === "string" ? content : partsText(content) });
          break;
        }
        if (message.role === "assistant") {
          openAssistant = { role: "assistant", content: typeof content === "string" ? content : partsText(content) };
          messages.push(openAssistant);
          break;
        }
        messages.push({ role: "user", content: userContent(content, where, options.images) });
        openAssistant = null;
      }
    }
  }
  return { messages, warnings };
}

function userContent(content: string | ReadonlyArray<{ type: string; text?: string; image_url?: string | null | undefined }>, where: string, images: boolean): string | ContentPart[] {
  if (typeof content === "string") return content;
  const parts: ContentPart[] = [];
  for (const [index, part] of content.entries()) {
    const param = `${where}.content[${index}]`;
    if (part.type === "input_image") {
      if (!images) throw new RuntimeError("invalid_request", `${param}: this model takes no image input`, { details: { param } });
      if (typeof part.image_url !== "string") throw new RuntimeError("invalid_request", `${param}.image_url: an image is given by URL or data URL (file_id is not supported)`, { details: { param: `${param}.image_url` } });
      parts.push({ type: "image_url", image_url: { url: part.image_url } });
    } else if (part.type === "input_file") {
      throw new RuntimeError("invalid_request", `${param}: input_file parts are not supported by this server`, { details: { param } });
    } else {
      parts.push({ type: "text", text: part.text ?? "" });
    }
  }
  return parts.every((part) => part.type === "text") ? parts.map((part) => (part.type === "text" ? part.text : "")).join("") : parts;
}
