import { z } from "zod";
import { RuntimeError } from "../../shared/runtime-error.js";

/**
 * POST /v1/messages (Anthropic's Messages API) as zod. Loose everywhere: Claude Code sends fields
 * we do not read (`context_management`, `output_config`, `cache_control` on blocks); the top-level
 * ones are listed in `local_ai.warnings`. Content blocks are checked one by one in
 * messages-content.ts, so that a refusal names `messages.3.content.1.type`, as the API does.
 */

const textBlock = z.object({ type: z.literal("text"), text: z.string() }).loose();

const messageParam = z
  .object({
    role: z.enum(["user", "assistant", "system"]),
    content: z.union([z.string(), z.array(z.object({ type: z.string() }).loose())]),
  })
  .loose();

const toolParam = z.object({ name: z.string().min(1), type: z.string().nullish() }).loose();

export const messagesRequestSchema = z
  .object({
    model: z.string().min(1),
    max_tokens: z.number().int().min(1),
    messages: z.array(messageParam),
    system: z.union([z.string(), z.array(textBlock)]).optional(),
    stream: z.boolean().optional(),
    stop_sequences: z.array(z.string()).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.number().int().min(0).optional(),
    metadata: z.object({ user_id: z.string().nullish() }).loose().optional(),
    tools: z.array(toolParam).optional(),
    tool_choice: z
      .object({ type: z.enum(["auto", "any", "tool", "none"]), name: z.string().optional(), disable_parallel_tool_use: z.boolean().optional() })
      .loose()
      .optional(),
    thinking: z
      .object({ type: z.enum(["enabled", "adaptive", "disabled"]), budget_tokens: z.number().int().min(0).optional(), display: z.enum(["summarized", "omitted"]).nullish() })
      .loose()
      .optional(),
    /** Extension (as Ollama, and on chat and responses bodies): seconds the model stays loaded once idle after this request; 0 = unload then, -1 = never. */
    keep_alive: z.number().int().min(-1).optional(),
  })
  .loose();

export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
export type MessageParam = MessagesRequest["messages"][number];

/** The fields we read: any other top-level field is named in `local_ai.warnings`. */
const KNOWN_FIELDS = new Set(Object.keys(messagesRequestSchema.shape));

/** `messages.3.content.1.type`: the API's way of naming a field. */
export const fieldPath = (path: readonly PropertyKey[]): string => path.map(String).join(".");

/** The body as a Messages request, or a 400 naming the first field that is wrong. */
export function parseMessagesRequest(raw: unknown): MessagesRequest {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new RuntimeError("invalid_request", "The request body must be a JSON object", { details: { param: null } });
  }
  const parsed = messagesRequestSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = fieldPath(issue?.path ?? []);
  const missing = issue?.code === "invalid_type" && (raw as Record<string, unknown>)[String(issue.path[0])] === undefined && issue.path.length === 1;
  throw new RuntimeError("invalid_request", `${param}: ${missing ? "Field required" : (issue?.message ?? "invalid value")}`, { details: { param } });
}

/** Top-level fields this server does not implement (context_management, output_config, safeguards, ...): accepted and named. */
export function unreadFieldWarnings(raw: unknown): string[] {
  if (raw === null || typeof raw !== "object") return [];
  return Object.keys(raw)
    .filter((key) => !KNOWN_FIELDS.has(key))
    .map((key) => `${key.slice(0, 64)}: not implemented by this server; ignored`);
}
