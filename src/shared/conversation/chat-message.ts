/** The conversation as every engine receives it and the store keeps it (OpenAI-shaped, since two of three engines speak it). */

export type ContentPart = { type: "text"; text: string } | ImagePart;

/** An image by URL (`data:` URLs for images that came from a tool). */
export type ImagePart = { type: "image_url"; image_url: { url: string } };

export interface ToolCall {
  /** Engine-assigned (or generated) id that the tool result refers back to. */
  id: string;
  name: string;
  /** The raw JSON text of the arguments as the model produced it (may be invalid JSON). */
  arguments: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  /**
   * `preamble`: what the model was given in front of this message (memory notes), kept apart from
   * what the user wrote and rendered into the message only for the model (renderForModel), so
   * every later turn renders it the same way and the KV cache prefix stays valid.
   */
  | { role: "user"; content: string | ContentPart[]; preamble?: string }
  | { role: "assistant"; content: string; tool_calls?: ToolCall[] }
  /**
   * `is_error`: the call failed, was refused or declined (kept for replays; engines never send it).
   * `images`: images the tool returned (MCP image content); `content` names each one. They reach
   * a model that takes images in a user message after the step's tool results (renderForModel).
   */
  | { role: "tool"; tool_call_id: string; name: string; content: string; is_error?: boolean; images?: ImagePart[] };

/** Flattens user content parts to text for engines without image input. */
export function contentText(content: string | ContentPart[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : `[image: ${part.image_url.url.slice(0, 64)}]`)).join("\n");
}
