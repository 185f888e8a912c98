import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { ContentPart } from "../shared/conversation/chat-message.js";
import { RuntimeError } from "../shared/runtime-error.js";

/**
 * A `session/prompt`'s content blocks as the turn's input: text as is, a resource link as a line
 * that names it (the model can read it with read_text_file), an embedded text resource as its
 * contents under its URI, an image as an image part (the engine refuses it when the model takes
 * no images; initialize did not offer them then). Without images the input is plain text.
 */
export function promptInput(blocks: readonly ContentBlock[]): string | ContentPart[] {
  const parts: ContentPart[] = blocks.map((block, index): ContentPart => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text };
      case "resource_link":
        return { type: "text", text: `[linked: ${block.title ?? block.name} <${block.uri}>${block.mimeType ? ` (${block.mimeType})` : ""}]` };
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) return { type: "text", text: `Contents of ${resource.uri}:\n\`\`\`\n${resource.text}\n\`\`\`` };
        if (resource.mimeType?.startsWith("image/") === true) return { type: "image_url", image_url: { url: `data:${resource.mimeType};base64,${resource.blob}` } };
        return { type: "text", text: `[binary resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ""}, not shown]` };
      }
      case "image":
        return { type: "image_url", image_url: { url: `data:${block.mimeType};base64,${block.data}` } };
      case "audio":
        throw new RuntimeError("invalid_params", `prompt[${index}]: audio input is not supported (promptCapabilities.audio is false)`, { details: { param: `prompt[${index}]` } });
      default: {
        const unknown = block as { type: string };
        throw new RuntimeError("invalid_params", `prompt[${index}]: content of type "${unknown.type}" is not supported`, { details: { param: `prompt[${index}]` } });
      }
    }
  });
  if (parts.every((part) => part.type === "text")) return parts.map((part) => (part as { text: string }).text).join("\n\n");
  return parts;
}

/** A session's title: the opening words of its first prompt. */
export function titleOf(blocks: readonly ContentBlock[]): string | null {
  const text = blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join(" ").replace(/\s+/g, " ").trim();
  if (text === "") return null;
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
