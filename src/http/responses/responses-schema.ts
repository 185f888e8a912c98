import { z } from "zod";
import { RuntimeError } from "../../shared/runtime-error.js";
import { parseBody } from "../request/parse-body.js";

/**
 * POST /v1/responses as zod. Loose everywhere: clients send fields we do not read (Codex's
 * `client_metadata`, `include`); the ones at the top level are listed in `local_ai.warnings`.
 * Input items are checked one by one (inputItemSchema) so that a refusal names `input[i]...`.
 */

const text = z.string();

const inputText = z.object({ type: z.literal("input_text"), text }).loose();
const outputText = z.object({ type: z.literal("output_text"), text }).loose();
const refusal = z.object({ type: z.literal("refusal"), refusal: text }).loose();
const inputImage = z
  .object({ type: z.literal("input_image"), image_url: z.string().min(1).nullish(), file_id: z.string().nullish(), detail: z.string().nullish() })
  .loose();
const inputFile = z.object({ type: z.literal("input_file") }).loose();

export const messageContentPart = z.discriminatedUnion("type", [inputText, outputText, refusal, inputImage, inputFile]);

const messageItem = z
  .object({
    type: z.literal("message").optional(),
    id: z.string().nullish(),
    role: z.enum(["system", "developer", "user", "assistant"]),
    content: z.union([z.string(), z.array(messageContentPart)]),
    status: z.string().nullish(),
  })
  .loose();

const functionCallItem = z
  .object({
    type: z.literal("function_call"),
    id: z.string().nullish(),
    call_id: z.string().min(1),
    name: z.string().min(1),
    namespace: z.string().nullish(),
    arguments: z.string(),
    status: z.string().nullish(),
  })
  .loose();

const functionOutputPart = z.discriminatedUnion("type", [inputText, inputImage, inputFile]);
const functionCallOutputItem = z
  .object({
    type: z.literal("function_call_output"),
    id: z.string().nullish(),
    call_id: z.string().min(1),
    output: z.union([z.string(), z.array(functionOutputPart)]),
    status: z.string().nullish(),
  })
  .loose();

const reasoningItem = z
  .object({
    type: z.literal("reasoning"),
    id: z.string().nullish(),
    summary: z.array(z.object({ text }).loose()).nullish(),
    content: z.array(z.object({ text }).loose()).nullish(),
    encrypted_content: z.string().nullish(),
  })
  .loose();

// Codex sends its tools as this input item (instead of `tools`) for the models in its own catalog.
const additionalToolsItem = z
  .object({ type: z.literal("additional_tools"), id: z.string().nullish(), role: z.string().nullish(), tools: z.array(z.object({ type: z.string() }).loose()) })
  .loose();

// The MCP items: the client's answer to an approval request, and earlier output items sent back.
const mcpApprovalResponseItem = z
  .object({ type: z.literal("mcp_approval_response"), id: z.string().nullish(), approval_request_id: z.string().min(1), approve: z.boolean(), reason: z.string().nullish() })
  .loose();
const mcpListToolsItem = z.object({ type: z.literal("mcp_list_tools"), id: z.string().nullish(), server_label: z.string(), tools: z.array(z.unknown()) }).loose();
const mcpApprovalRequestItem = z.object({ type: z.literal("mcp_approval_request"), id: z.string().min(1), server_label: z.string(), name: z.string(), arguments: z.string() }).loose();
const mcpCallItem = z
  .object({ type: z.literal("mcp_call"), id: z.string().min(1), server_label: z.string(), name: z.string().min(1), arguments: z.string(), output: z.string().nullish(), error: z.string().nullish() })
  .loose();

const itemReference = z.object({ type: z.literal("item_reference").nullish(), id: z.string().min(1) }).loose();

export type MessageItem = z.output<typeof messageItem>;
export type FunctionCallItem = z.output<typeof functionCallItem>;
export type FunctionCallOutputItem = z.output<typeof functionCallOutputItem>;
export type ReasoningInputItem = z.output<typeof reasoningItem>;
export type AdditionalToolsItem = z.output<typeof additionalToolsItem>;
export type ItemReference = z.output<typeof itemReference>;
export type McpApprovalResponseItem = z.output<typeof mcpApprovalResponseItem>;
export type McpCallInputItem = z.output<typeof mcpCallItem>;
export type McpInputItem = McpApprovalResponseItem | z.output<typeof mcpListToolsItem> | z.output<typeof mcpApprovalRequestItem> | McpCallInputItem;
export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningInputItem | AdditionalToolsItem | McpInputItem | ItemReference;

export const INPUT_ITEM_TYPES = [
  "message", "function_call", "function_call_output", "reasoning", "additional_tools",
  "mcp_approval_response", "mcp_list_tools", "mcp_approval_request", "mcp_call", "item_reference",
] as const;

/**
 * One item of `input`, or a 400 naming where it is wrong (`input[3].type`, `input[1].content[0].text`).
 * A message may leave out `type` (EasyInputMessage); so may an item reference.
 */
export function parseInputItem(raw: unknown, index: number): InputItem {
  const where = `input[${index}]`;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new RuntimeError("invalid_request", `${where}: an input item must be an object`, { details: { param: where } });
  }
  const type = (raw as { type?: unknown }).type;
  const role = (raw as { role?: unknown }).role;
  const schema =
    type === "message" || ((type === undefined || type === null) && role !== undefined) ? messageItem
    : type === "function_call" ? functionCallItem
    : type === "function_call_output" ? functionCallOutputItem
    : type === "reasoning" ? reasoningItem
    : type === "additional_tools" ? additionalToolsItem
    : type === "mcp_approval_response" ? mcpApprovalResponseItem
    : type === "mcp_list_tools" ? mcpListToolsItem
    : type === "mcp_approval_request" ? mcpApprovalRequestItem
    : type === "mcp_call" ? mcpCallItem
    : type === "item_reference" || type === undefined || type === null ? itemReference
    : null;
  if (schema === null) {
    throw new RuntimeError(
      "invalid_request",
      `${where}.type: unsupported input item type ${JSON.stringify(type).slice(0, 64)} (this server takes ${INPUT_ITEM_TYPES.join(", ")})`,
      { details: { param: `${where}.type` } },
    );
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const { path, message } = issue === undefined ? { path: [], message: "invalid item" } : deepest(issue);
  const param = [where, ...path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`))].join("");
  throw new RuntimeError("invalid_request", `${param}: ${message}`, { details: { param } });
}

/** A union's failure names the member that got furthest (`content[0].text`, not `content`). */
function deepest(issue: z.core.$ZodIssue): { path: PropertyKey[]; message: string } {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return { path: issue.path, message: issue.message };
  const inner = issue.errors.flatMap((branch) => branch.slice(0, 1)).map(deepest);
  const best = inner.reduce((a, b) => (b.path.length > a.path.length ? b : a));
  return { path: [...issue.path, ...best.path], message: best.message };
}

const functionTool = z
  .object({
    type: z.literal("function"),
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "function names are 1-64 letters, digits, _ or -"),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  })
  .loose();

const namespaceTool = z
  .object({ type: z.literal("namespace"), name: z.string().min(1), description: z.string().nullish(), tools: z.array(z.unknown()) })
  .loose();

export type FunctionTool = z.output<typeof functionTool>;
export { functionTool as functionToolSchema, namespaceTool as namespaceToolSchema };

const toolChoice = z.union([
  z.enum(["auto", "none", "required"]),
  z.object({ type: z.literal("function"), name: z.string().min(1) }).loose(),
  // allowed_tools, hosted tool types, mcp, custom: accepted, read as "auto" (responses-tools.ts).
  z.object({ type: z.string() }).loose(),
]);

const textFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }).loose(),
  z.object({ type: z.literal("json_object") }).loose(),
  z
    .object({
      type: z.literal("json_schema"),
      name: z.string().min(1),
      schema: z.record(z.string(), z.unknown()),
      strict: z.boolean().nullish(),
      description: z.string().nullish(),
    })
    .loose(),
]);

export const responsesRequestSchema = z
  .object({
    model: z.string().min(1).optional(),
    input: z.union([z.string(), z.array(z.unknown())]).optional(),
    instructions: z.string().nullish(),
    tools: z.array(z.object({ type: z.string() }).loose()).nullish(),
    tool_choice: toolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    text: z.object({ format: textFormat.nullish(), verbosity: z.string().nullish() }).loose().nullish(),
    max_output_tokens: z.number().int().min(1).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    // Not in OpenAI's Responses API, but llama-server and vLLM take it: read as in chat completions.
    stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
    seed: z.number().int().nullish(),
    reasoning: z.object({ effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).nullish(), summary: z.string().nullish() }).loose().nullish(),
    truncation: z.enum(["auto", "disabled"]).nullish(),
    /** Extension (as Ollama): seconds the model stays loaded once idle after this request; 0 = unload then, -1 = never. */
    keep_alive: z.number().int().min(-1).optional(),
    store: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    previous_response_id: z.string().min(1).nullish(),
    prompt_cache_key: z.string().min(1).max(256).nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    user: z.string().nullish(),
    safety_identifier: z.string().nullish(),
    service_tier: z.string().nullish(),
    background: z.boolean().nullish(),
    // Codex sends these; accepted and not acted on (documented), so no warning for them.
    include: z.array(z.string()).nullish(),
    stream_options: z.object({}).loose().nullish(),
    client_metadata: z.unknown().optional(),
    prompt_cache_retention: z.string().nullish(),
  })
  .loose();

export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

const KNOWN_FIELDS = new Set(Object.keys(responsesRequestSchema.shape));

/** The body as a Responses request; a body that is not one is a 400 naming the first bad field. */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new RuntimeError("invalid_request", "The body must be a JSON object (a Responses request)", { details: { param: "body" } });
  }
  const parsed = parseBody(responsesRequestSchema, body);
  if (parsed.background === true) {
    throw new RuntimeError("invalid_request", "background: background responses are not supported by this server; send the request without background (stream: true to follow a long turn)", { details: { param: "background" } });
  }
  if (parsed.input === undefined && parsed.previous_response_id == null) {
    throw new RuntimeError("invalid_request", "input: required (a string or a list of input items)", { details: { param: "input" } });
  }
  return parsed;
}

/** Top-level fields this server does not read, listed so a client knows they had no effect. */
export function unreadFieldWarnings(body: unknown): string[] {
  if (body === null || typeof body !== "object") return [];
  return Object.keys(body)
    .filter((key) => !KNOWN_FIELDS.has(key))
    .map((key) => `ignored field "${key.slice(0, 64)}": not supported by this server`);
}
