import type { ChatMessage, ToolCall } from "../../shared/conversation/chat-message.js";
import type { SamplingOverrides } from "../../shared/conversation/sampling-overrides.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { HttpError } from "../http-error.js";
import { toSamplingOverrides } from "../turn/sampling-overrides.js";
import { parseInput, toMessages, type IndexedItem } from "./input-mapping.js";
import { itemKeyOf } from "./response-object.js";
import type { ResponseReader } from "./response-reader.js";
import type { ResponseStore, StoredResponse } from "./response-store.js";
import { unreadFieldWarnings, type McpApprovalResponseItem, type ResponsesRequest } from "./responses-schema.js";
import { toClientToolSet, toolEntries, toToolChoice } from "./responses-tools.js";
import { requestMcpServers, type RequestMcpServer } from "./mcp-tool-request.js";

/** Everything a Responses request asks of one turn, resolved before the turn starts. */
export interface ResponseTurn {
  /** The whole conversation the model is given (instructions first), system text inline. */
  messages: ChatMessage[];
  /** The conversation without `instructions`, as a continuation will start from it. */
  context: ChatMessage[];
  inputItems: IndexedItem[];
  clientTools: ToolSpec[] | undefined;
  namespaced: Map<string, { namespace: string; name: string }>;
  overrides: SamplingOverrides;
  /** prompt_cache_key, else the chain's key from the previous response; undefined: a new conversation. */
  cacheKey: string | undefined;
  /** The request's `mcp` tools (empty when it has none). */
  mcpServers: RequestMcpServer[];
  /** The previous response paused for approval and this request answers it. */
  resume: { decision: "approve" | "decline"; approvalId: string; callId: string } | undefined;
  warnings: string[];
}

export interface ResolveOptions {
  store: ResponseStore | undefined;
  /** Who asks: another key's stored responses and items are not there for it. */
  reader: ResponseReader;
  /** The model takes image parts. */
  images: boolean;
  /** http.allow_request_mcp: `mcp` tools may name servers to connect to. */
  allowMcp: boolean;
}

/**
 * Resolves the request into a turn: the previous response's conversation (404 naming
 * `previous_response_id` when it is not stored), the input items (references resolved), the
 * client's tools and the sampling overrides, read exactly as chat completions reads them.
 */
export async function resolveResponseTurn(raw: unknown, request: ResponsesRequest, options: ResolveOptions): Promise<ResponseTurn> {
  const warnings = unreadFieldWarnings(raw);
  let previous: StoredResponse | null = null;
  if (request.previous_response_id != null) {
    previous = (await options.store?.get(request.previous_response_id, options.reader)) ?? null;
    if (previous === null) {
      throw new HttpError("not_found", `previous_response_id: no stored response with id ${JSON.stringify(request.previous_response_id.slice(0, 80))} (it was never stored, was deleted, or expired)`, "previous_response_id");
    }
  }
  const inputItems = await parseInput(request.input, (id) => findItem(options.store, id, options.reader));
  const entries = toolEntries(request, inputItems);
  // Refused before anything else is looked at: a disabled mcp tool must not connect anywhere.
  const mcpServers = requestMcpServers(entries, options.allowMcp);
  const tools = toClientToolSet(entries);
  warnings.push(...tools.warnings);
  const resume = approvalAnswer(inputItems, previous);
  const choice = toToolChoice(request, tools);
  warnings.push(...choice.warnings);
  const offeredName = (name: string, namespace: string | null | undefined): string => {
    if (namespace == null) return name;
    return [...tools.namespaced].find(([, target]) => target.namespace === namespace && target.name === name)?.[0] ?? name;
  };
  const earlierCalls: ToolCall[] = (previous?.context ?? []).flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : []));
  const mapped = toMessages(inputItems, { offeredName, images: options.images, earlierCalls });
  warnings.push(...mapped.warnings);
  const context = [...(previous?.context ?? []), ...mapped.messages];
  assertAnswerable(context, resume !== undefined);
  const instructions = request.instructions?.trim() ?? "";
  const messages: ChatMessage[] = instructions === "" ? context : [{ role: "system", content: instructions }, ...context];
  // Read by the same code as chat completions' fields (text.format is its response_format).
  const overrides = toSamplingOverrides({ ...request, max_tokens: request.max_output_tokens, format: request.text?.format, tool_choice: choice.choice, reasoning_effort: request.reasoning?.effort });
  const cacheKey = request.prompt_cache_key != null ? `responses/${request.prompt_cache_key}` : previous?.cache_key;
  return { messages, context, inputItems, clientTools: tools.specs, namespaced: tools.namespaced, overrides, cacheKey, mcpServers, resume, warnings };
}

const refuse = (param: string, message: string): never => {
  throw new RuntimeError("invalid_request", `${param}: ${message}`, { details: { param } });
};

/**
 * A previous response that paused on an MCP call (`mcp_approval_request`) is resumed by an
 * `mcp_approval_response` naming it, alone in `input`: the call runs (or the model is told it
 * was declined) and the turn goes on. Without the answer the request is refused.
 */
function approvalAnswer(items: readonly IndexedItem[], previous: StoredResponse | null): ResponseTurn["resume"] {
  const answers = items.filter(({ item }) => item.type === "mcp_approval_response");
  const pending = previous?.pending_approval;
  const first = answers[0];
  if (first === undefined) {
    if (pending !== undefined) refuse("input", `the previous response waits for the approval of ${pending.id}: send an mcp_approval_response item with approval_request_id ${JSON.stringify(pending.id)}`);
    return undefined;
  }
  const answer = first.item as McpApprovalResponseItem;
  const param = `input[${first.index}].approval_request_id`;
  if (pending === undefined || answer.approval_request_id !== pending.id) {
    refuse(param, `no approval request ${JSON.stringify(answer.approval_request_id.slice(0, 80))} waits in the response named by previous_response_id`);
  }
  const other = items.find(({ item }) => item.type !== "mcp_approval_response" && item.type !== "mcp_approval_request" && item.type !== "mcp_list_tools");
  if (answers.length > 1 || other !== undefined) refuse(`input[${(answers[1] ?? other)!.index}]`, "a request that answers an approval request takes only that mcp_approval_response (the paused turn goes on from the call)");
  return { decision: answer.approve ? "approve" : "decline", approvalId: pending!.id, callId: pending!.call_id };
}

/** The conversation must hold a user message, and a call must have its output before the model goes on. */
function assertAnswerable(context: readonly ChatMessage[], resuming: boolean): void {
  if (!context.some((message) => message.role === "user")) {
    throw new RuntimeError("invalid_request", "input: the conversation holds no user message", { details: { param: "input" } });
  }
  // A resumed turn ends with the call it paused at (and the model's other calls of that step).
  if (resuming) return;
  const answered = new Set(context.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : [])));
  const last = context.findLast((m) => m.role === "assistant");
  const open = (last?.role === "assistant" ? (last.tool_calls ?? []) : []).filter((call) => !answered.has(call.id));
  if (open.length > 0) {
    throw new RuntimeError("invalid_request", `input: the function_call ${JSON.stringify(open[0]?.id)} has no function_call_output: send one for each call`, { details: { param: "input" } });
  }
}

/** An item of a stored response by its id (item ids carry their response's item key; see itemId). */
async function findItem(store: ResponseStore | undefined, id: string, reader: ResponseReader): Promise<unknown> {
  const key = itemKeyOf(id);
  if (store === undefined || key === null) return null;
  const stored = await store.getByItemKey(key, reader);
  if (stored === null) return null;
  return [...stored.response.output, ...stored.input_items].find((item) => item.id === id) ?? null;
}
