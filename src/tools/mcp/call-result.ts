import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import { capOutput } from "../output-cap.js";
import type { ToolCallResult, ToolImage } from "../tool-types.js";

/**
 * An MCP tool result for the model. Text blocks are joined with newlines; binary blocks are named
 * in the text (`[image: image/png, 1234 bytes]`): base64 would only burn context. Images are also
 * passed on as `images`, which reach a model that takes images (the agent decides, per engine);
 * audio has no engine that takes it. Links and embedded resources come with their URI. A result
 * with no text but `structuredContent` is given as its JSON.
 */
export function toToolCallResult(result: CallToolResult | LegacyToolResult, maxOutputBytes: number): ToolCallResult {
  if (!("content" in result)) return { status: "ok", content: capOutput(JSON.stringify(result.toolResult) ?? "", maxOutputBytes), retryable: false };
  const parts = result.content.map(describeBlock);
  const hasText = result.content.some((block) => block.type === "text" || (block.type === "resource" && "text" in block.resource));
  if (!hasText && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join("\n");
  const images: ToolImage[] = result.content.flatMap((block) => (block.type === "image" ? [{ mimeType: block.mimeType, data: block.data }] : []));
  const withImages = images.length === 0 ? {} : { images };
  if (result.isError === true) {
    // The tool ran and said no (bad path, denied access): trying the same call again will not help.
    return { status: "error", content: capOutput(text === "" ? "the tool reported an error without a message" : text, maxOutputBytes), retryable: false, ...withImages };
  }
  return { status: "ok", content: capOutput(text, maxOutputBytes), retryable: false, ...withImages };
}

/** The pre-2024-11-05 result shape, which the SDK still accepts from old servers. */
export interface LegacyToolResult {
  toolResult: unknown;
}

/** One content block as text (images and audio named with type and size). */
export function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case "audio":
      return `[audio: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case "resource_link":
      return `[resource link: ${block.uri}${block.mimeType === undefined ? "" : `, ${block.mimeType}`}]`;
    case "resource": {
      const resource = block.resource;
      // Embedded text (a file's contents) is what the model asked for, under its URI; a blob is only summarized.
      if ("text" in resource) return `[resource: ${resource.uri}]\n${resource.text}`;
      return `[resource: ${resource.uri}${resource.mimeType === undefined ? "" : `, ${resource.mimeType}`}, ${base64Bytes(resource.blob)} bytes]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

/** Decoded size of base64 data, without decoding it. */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}
