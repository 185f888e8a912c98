import type { ChatMessage, ContentPart } from "../shared/conversation/chat-message.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { base64Bytes } from "../tools/mcp/call-result.js";
import type { McpContent, ToolProvider } from "../tools/tool-types.js";

/** A chat input part: text, an image, or an MCP resource to attach (`{type: "resource", server, uri}`). */
export type InputPart = ContentPart | ResourcePart;

export interface ResourcePart {
  type: "resource";
  server: string;
  uri: string;
}

/** An MCP prompt to start a turn with, instead of `input` (`prompts/get`). */
export interface PromptRef {
  server: string;
  name: string;
  arguments?: Record<string, string> | undefined;
}

/**
 * A new turn's opening messages: the user's input as it is, with each MCP resource part replaced
 * by the resource's contents under its URI, or an MCP prompt's messages. Images (a resource's, a
 * prompt's) go to a model that takes images; other models get a placeholder naming type and size.
 */
export async function openingMessages(
  tools: ToolProvider,
  request: { input?: string | InputPart[] | undefined; prompt?: PromptRef | undefined },
  options: { images: boolean; signal: AbortSignal },
): Promise<ChatMessage[]> {
  const { prompt, input } = request;
  if (prompt !== undefined) {
    await tools.start(options.signal);
    if (tools.getPrompt === undefined) throw new RuntimeError("invalid_params", `no MCP server "${prompt.server}" is running`, { details: { param: "prompt.server" } });
    const messages = await tools.getPrompt(prompt.server, prompt.name, prompt.arguments ?? {}, options.signal);
    const turn: ChatMessage[] = messages.map((message) =>
      message.role === "user" ? { role: "user", content: userContent(message.content, options.images) } : { role: "assistant", content: message.content.map((part) => textOf(part)).join("\n") },
    );
    // A turn starts with the user's message; a prompt that opens otherwise is led by its name.
    if (turn[0]?.role !== "user") turn.unshift({ role: "user", content: `/${prompt.server}:${prompt.name}` });
    return turn;
  }
  if (input === undefined || typeof input === "string") return [{ role: "user", content: input ?? "" }];
  if (!input.some((part) => part.type === "resource")) return [{ role: "user", content: input as ContentPart[] }];
  await tools.start(options.signal);
  const parts: ContentPart[] = [];
  for (const part of input) {
    if (part.type !== "resource") {
      parts.push(part);
      continue;
    }
    if (tools.readResource === undefined) throw new RuntimeError("invalid_params", `no MCP server "${part.server}" is running`, { details: { param: "input" } });
    const contents = await tools.readResource(part.server, part.uri, options.signal);
    parts.push(...toParts(contents, options.images));
  }
  return [{ role: "user", content: parts }];
}

/** All text: one string (as a typed message is); with an image: content parts. */
function userContent(content: McpContent[], images: boolean): string | ContentPart[] {
  const parts = toParts(content, images);
  return parts.every((part) => part.type === "text") ? parts.map((part) => (part.type === "text" ? part.text : "")).join("\n") : parts;
}

function toParts(content: McpContent[], images: boolean): ContentPart[] {
  return content.map((part): ContentPart => (part.type === "image" && images ? { type: "image_url", image_url: { url: `data:${part.mimeType};base64,${part.data}` } } : { type: "text", text: textOf(part) }));
}

function textOf(part: McpContent): string {
  return part.type === "text" ? part.text : `[image: ${part.mimeType}, ${base64Bytes(part.data)} bytes]`;
}

/**
 * `arg=value` pairs as a prompt's arguments (a value in double quotes may hold blanks:
 * `tone="very kind"`), or what could not be read, for the user.
 */
export function parsePromptArguments(text: string): Record<string, string> | string {
  const args: Record<string, string> = {};
  const pair = /([^\s=]+)=(?:"([^"]*)"|(\S*))\s*/y;
  const trimmed = text.trim();
  let at = 0;
  while (at < trimmed.length) {
    pair.lastIndex = at;
    const match = pair.exec(trimmed);
    if (match === null) return `arguments are name=value pairs (a value with blanks in double quotes); could not read "${trimmed.slice(at)}"`;
    args[match[1] as string] = match[2] ?? match[3] ?? "";
    at = pair.lastIndex;
  }
  return args;
}

/** `/<server>:<prompt> arg=value ...` as typed (terminal chat, an editor's command); null: not that form. */
export function parsePromptCommand(text: string): { server: string; name: string; rest: string } | null {
  const match = /^\/([A-Za-z0-9_.-]+):(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (match === null) return null;
  return { server: match[1] as string, name: match[2] as string, rest: match[3] ?? "" };
}
