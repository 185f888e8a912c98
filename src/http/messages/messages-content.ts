import type { ChatMessage, ContentPart, ToolCall } from "../../shared/conversation/chat-message.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { MessageParam, MessagesRequest } from "./messages-schema.js";

/** Claude Code's first system block: per-version client metadata, not for the model (and it would defeat the KV cache). */
const BILLING_HEADER = "x-anthropic-billing-header:";

type Block = { type: string } & Record<string, unknown>;

const refuse = (param: string, message: string): never => {
  throw new RuntimeError("invalid_request", `${param}: ${message}`, { details: { param } });
};

const stringField = (block: Block, key: string, where: string): string => {
  const value = block[key];
  return typeof value === "string" ? value : refuse(`${where}.${key}`, "Field required (a string)");
};

export interface MappingOptions {
  /** The model takes image input: image blocks are refused (naming the block) otherwise. */
  images: boolean;
}

/**
 * The request's `system` and `messages` as the conversation the engines take. System text (the
 * top-level `system` and messages with role `system`) becomes system messages, which the agent
 * adds to its own system prompt. Assistant `tool_use` blocks become tool calls; a user's
 * `tool_result` blocks become tool messages and must answer a `tool_use` made before them.
 * `thinking` and `redacted_thinking` blocks are dropped (the engines take no reasoning of earlier
 * turns): never an error.
 */
export function toConversation(request: Pick<MessagesRequest, "system" | "messages">, options: MappingOptions): ChatMessage[] {
  const conversation: ChatMessage[] = [];
  const system = systemText(request.system);
  if (system !== "") conversation.push({ role: "system", content: system });
  const calls = new Map<string, string>();
  // The tool_use ids of the last assistant message that the next user message must answer.
  let open: { index: number; ids: string[] } | null = null;
  for (const [index, message] of request.messages.entries()) {
    const where = `messages.${index}`;
    if (message.role === "system") {
      conversation.push({ role: "system", content: plainText(message, where) });
      continue;
    }
    if (open !== null) assertAnswered(open, message.role === "user" ? message : null, where);
    open = null;
    if (message.role === "assistant") {
      const assistant = assistantMessage(message, where, calls);
      conversation.push(assistant);
      const ids = assistant.role === "assistant" ? (assistant.tool_calls ?? []).map((call) => call.id) : [];
      if (ids.length > 0) open = { index, ids };
    } else {
      conversation.push(...userMessages(message, where, calls, options));
    }
  }
  if (open !== null) refuse(`messages.${open.index}.content`, "the conversation ends with tool_use blocks: send their tool_result blocks in a user message after it");
  return conversation;
}

/** As the API: every tool_use must have its tool_result in the user message right after it. */
function assertAnswered(open: { index: number; ids: string[] }, next: MessageParam | null, where: string): void {
  const answered = new Set(
    next === null || typeof next.content === "string" ? [] : next.content.flatMap((block) => (block.type === "tool_result" && typeof block.tool_use_id === "string" ? [block.tool_use_id] : [])),
  );
  const missing = open.ids.filter((id) => !answered.has(id));
  if (missing.length > 0) {
    refuse(`${where}.content`, `tool_use ids were found without tool_result blocks immediately after: ${missing.map((id) => id.slice(0, 80)).join(", ")}. Each tool_use block of messages.${open.index} must have a tool_result block in the next message`);
  }
}

/** The `system` field: a string, or text blocks without Claude Code's billing header. */
export function systemText(system: MessagesRequest["system"]): string {
  if (system === undefined) return "";
  if (typeof system === "string") return system;
  return system
    .filter((block) => !block.text.startsWith(BILLING_HEADER))
    .map((block) => block.text)
    .join("\n\n");
}

function plainText(message: MessageParam, where: string): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((block, j) => (block.type === "text" ? stringField(block, "text", `${where}.content.${j}`) : refuse(`${where}.content.${j}.type`, `a ${message.role} message takes text blocks only (got "${block.type.slice(0, 64)}")`)))
    .join("\n\n");
}

function assistantMessage(message: MessageParam, where: string, calls: Map<string, string>): ChatMessage {
  if (typeof message.content === "string") return { role: "assistant", content: message.content };
  let text = "";
  const toolCalls: ToolCall[] = [];
  for (const [j, block] of message.content.entries()) {
    const at = `${where}.content.${j}`;
    switch (block.type) {
      case "text":
        text += stringField(block, "text", at);
        break;
      case "thinking":
      case "redacted_thinking":
        break;
      case "tool_use": {
        const call = { id: stringField(block, "id", at), name: stringField(block, "name", at), arguments: JSON.stringify(block.input ?? {}) };
        calls.set(call.id, call.name);
        toolCalls.push(call);
        break;
      }
      default:
        refuse(`${at}.type`, `unknown or unsupported content block type "${block.type.slice(0, 64)}" in an assistant message`);
    }
  }
  return toolCalls.length > 0 ? { role: "assistant", content: text, tool_calls: toolCalls } : { role: "assistant", content: text };
}

/** A user message: its tool results first (as tool messages), then its text and images as one user message. */
function userMessages(message: MessageParam, where: string, calls: Map<string, string>, options: MappingOptions): ChatMessage[] {
  if (typeof message.content === "string") return [{ role: "user", content: message.content }];
  const results: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const [j, block] of message.content.entries()) {
    const at = `${where}.content.${j}`;
    switch (block.type) {
      case "text":
        parts.push({ type: "text", text: stringField(block, "text", at) });
        break;
      case "image":
        parts.push({ type: "image_url", image_url: { url: imageUrl(block, at, options) } });
        break;
      case "document":
        parts.push({ type: "text", text: documentText(block, at) });
        break;
      case "tool_result": {
        const id = stringField(block, "tool_use_id", at);
        const name = calls.get(id) ?? refuse(`${at}.tool_use_id`, `no tool_use block with id ${JSON.stringify(id.slice(0, 80))} comes before this tool_result`);
        results.push({ role: "tool", tool_call_id: id, name, content: toolResultText(block, at), ...(block.is_error === true ? { is_error: true } : {}) });
        break;
      }
      case "thinking":
      case "redacted_thinking":
        break;
      default:
        refuse(`${at}.type`, `unknown or unsupported content block type "${block.type.slice(0, 64)}"`);
    }
  }
  if (parts.length === 0) return results;
  const content = parts.every((part) => part.type === "text") ? parts.map((part) => (part.type === "text" ? part.text : "")).join("\n\n") : parts;
  return [...results, { role: "user", content }];
}

function imageUrl(block: Block, at: string, options: MappingOptions): string {
  if (!options.images) refuse(at, "this model takes no image input");
  const source = (block.source ?? {}) as Block;
  if (source.type === "base64") return `data:${stringField(source, "media_type", `${at}.source`)};base64,${stringField(source, "data", `${at}.source`)}`;
  if (source.type === "url") return stringField(source, "url", `${at}.source`);
  return refuse(`${at}.source.type`, `image source type ${JSON.stringify(source.type ?? null)} is not supported (base64 or url)`);
}

/** A document with a text source (or text content blocks) is read as text; PDFs and files are not. */
function documentText(block: Block, at: string): string {
  const source = (block.source ?? {}) as Block;
  const title = typeof block.title === "string" ? `${block.title}\n\n` : "";
  if (source.type === "text") return `${title}${stringField(source, "data", `${at}.source`)}`;
  if (source.type === "content") {
    const content = source.content;
    if (typeof content === "string") return `${title}${content}`;
    if (Array.isArray(content)) return `${title}${(content as Block[]).map((inner, k) => (inner.type === "text" ? stringField(inner, "text", `${at}.source.content.${k}`) : refuse(`${at}.source.content.${k}.type`, "only text blocks are read"))).join("\n\n")}`;
  }
  return refuse(`${at}.source.type`, `document source type ${JSON.stringify(source.type ?? null)} is not supported by this server (text or content)`);
}

function toolResultText(block: Block, at: string): string {
  const content = block.content;
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return refuse(`${at}.content`, "a string or content blocks");
  return (content as Block[])
    .map((inner, k) => {
      const place = `${at}.content.${k}`;
      if (inner.type === "text") return stringField(inner, "text", place);
      if (inner.type === "document") return documentText(inner, place);
      return refuse(`${place}.type`, `content block type "${String(inner.type).slice(0, 64)}" is not supported in a tool_result by this server (text or document)`);
    })
    .join("\n\n");
}
