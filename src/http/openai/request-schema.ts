import { z } from "zod";
import type { ContentPart } from "../../engine/chat-types.js";
import { RuntimeError } from "../../shared/runtime-error.js";

const contentPart = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }).loose(),
  z.object({ type: z.literal("image_url"), image_url: z.object({ url: z.string().min(1) }).loose() }).loose(),
]);

// Loose objects: OpenAI clients send fields we do not use (temperature, n, tools, name...); they
// are tolerated, not refused, so unmodified clients work. The agent's config decides sampling.
const message = z
  .object({
    role: z.string().min(1),
    content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
  })
  .loose();

export const chatRequestSchema = z
  .object({
    model: z.string().min(1).optional(),
    messages: z.array(message),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullish(),
    user: z.string().optional(),
    session_id: z.string().optional(),
    resume: z.boolean().optional(),
    approve_execution: z.boolean().optional(),
    events: z.boolean().optional(),
  })
  .loose();

export type ChatRequest = z.output<typeof chatRequestSchema>;

/** Parses the body; the first issue becomes `invalid_request` with its path as `param` (OpenAI style). */
export function parseChatRequest(body: unknown): ChatRequest {
  const parsed = chatRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = issue === undefined ? null : issue.path.map(String).join(".") || null;
  throw new RuntimeError("invalid_request", issue === undefined ? "Invalid request body" : `${param ?? "body"}: ${issue.message}`, {
    details: param === null ? {} : { param },
  });
}

/**
 * Only the last user message is the turn's input: earlier turns come from the session store, so
 * a client resending the whole conversation does not duplicate it. `resume` needs no input.
 */
export function lastUserInput(request: ChatRequest): string | ContentPart[] | undefined {
  const last = request.messages.findLast((m) => m.role === "user");
  if (last === undefined) {
    if (request.resume === true) return undefined;
    throw new RuntimeError("invalid_request", "messages must contain a user message", { details: { param: "messages" } });
  }
  const content = last.content ?? "";
  if (typeof content === "string") return content;
  return content.map((part): ContentPart => (part.type === "text" ? { type: "text", text: part.text } : { type: "image_url", image_url: { url: part.image_url.url } }));
}
