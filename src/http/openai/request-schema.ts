import { z } from "zod";
import { elicitationAnswerSchema } from "../../wire/elicitation-answer-schema.js";
import type { ContentPart } from "../../shared/conversation/chat-message.js";
import { contentPartSchema, textPartSchema } from "../../shared/content-part-schema.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { parseBody } from "../request/parse-body.js";

const textPart = textPartSchema;
// OpenAI refuses an image part without a URL; so does this API.
const contentPart = contentPartSchema(z.string().min(1));

const toolCall = z
  .object({
    id: z.string().min(1),
    type: z.literal("function").optional(),
    function: z.object({ name: z.string().min(1), arguments: z.string().default("{}") }).loose(),
  })
  .loose();

// Messages in OpenAI's shapes; `developer` is the newer name of `system`.
const message = z.discriminatedUnion("role", [
  z.object({ role: z.enum(["system", "developer"]), content: z.union([z.string(), z.array(textPart)]) }).loose(),
  z.object({ role: z.literal("user"), content: z.union([z.string(), z.array(contentPart)]) }).loose(),
  z.object({ role: z.literal("assistant"), content: z.union([z.string(), z.array(textPart), z.null()]).optional(), tool_calls: z.array(toolCall).optional() }).loose(),
  z.object({ role: z.literal("tool"), tool_call_id: z.string().min(1), content: z.union([z.string(), z.array(textPart)]) }).loose(),
]);

const functionTool = z
  .object({
    type: z.literal("function"),
    function: z
      .object({
        name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "function names are 1-64 letters, digits, _ or -"),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().nullish(),
      })
      .loose(),
  })
  .loose();

const toolChoice = z.union([
  z.enum(["auto", "none", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: z.string().min(1) }).loose() }).loose(),
]);

const responseFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }).loose(),
  z.object({ type: z.literal("json_object") }).loose(),
  z
    .object({
      type: z.literal("json_schema"),
      json_schema: z.object({ name: z.string().min(1), schema: z.record(z.string(), z.unknown()).optional(), strict: z.boolean().nullish(), description: z.string().optional() }).loose(),
    })
    .loose(),
]);

export const chatRequestSchema = z
  .object({
    model: z.string().min(1).optional(),
    messages: z.array(message),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullish(),
    user: z.string().min(1).max(256).optional(),
    session_id: z.string().optional(),
    resume: z.boolean().optional(),
    approve_execution: z.boolean().optional(),
    /** Session mode, with resume: the answer to an MCP server's question the turn paused on (docs/tools.md). */
    elicitation: elicitationAnswerSchema.optional(),
    events: z.boolean().optional(),
    /** llama-server's name: streamed chunks without choices carry `prompt_progress` while a long prompt is read. */
    return_progress: z.boolean().optional(),
    /** Extension (as Ollama): seconds the model stays loaded once idle after this request; 0 = unload then, -1 = never. */
    keep_alive: z.number().int().min(-1).optional(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    max_tokens: z.number().int().positive().nullish(),
    max_completion_tokens: z.number().int().positive().nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
    seed: z.number().int().nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    response_format: responseFormat.nullish(),
    tools: z.array(functionTool).nullish(),
    tool_choice: toolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    n: z.number().int().min(1).nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().nullish(),
  })
  .loose();

export type ChatRequest = z.output<typeof chatRequestSchema>;
export type RequestMessage = ChatRequest["messages"][number];

/** Parses the body; the first issue becomes `invalid_request` with its path as `param` (OpenAI style). */
export function parseChatRequest(body: unknown): ChatRequest {
  return parseBody(chatRequestSchema, body);
}

/**
 * Session mode: only the last user message is the turn's input (earlier turns come from the
 * session store, so a client resending the whole conversation does not duplicate it). `resume`
 * needs no input.
 */
export function lastUserInput(request: ChatRequest): string | ContentPart[] | undefined {
  const last = request.messages.findLast((m) => m.role === "user");
  if (last === undefined) {
    if (request.resume === true) return undefined;
    throw new RuntimeError("invalid_request", "messages must contain a user message", { details: { param: "messages" } });
  }
  return toParts(last.content);
}

export function toParts(content: string | Array<z.output<typeof contentPart>>): string | ContentPart[] {
  if (typeof content === "string") return content;
  return content.map((part): ContentPart => (part.type === "text" ? { type: "text", text: part.text } : { type: "image_url", image_url: { url: part.image_url.url } }));
}
