import { createHash } from "node:crypto";
import type { ChatMessage } from "../../shared/conversation/chat-message.js";
import type { SamplingOverrides } from "../../shared/conversation/sampling-overrides.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import { isSafeId } from "../../shared/safe-id.js";
import { toSamplingOverrides } from "../turn/sampling-overrides.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { chatRequestSchema, toParts, type ChatRequest, type RequestMessage } from "./request-schema.js";

/** Every field of the request body we read; anything else is reported in `local_ai.warnings`. */
const KNOWN_FIELDS = new Set(Object.keys(chatRequestSchema.shape));

const textOf = (content: string | Array<{ text: string }> | null | undefined): string =>
  content === null || content === undefined ? "" : typeof content === "string" ? content : content.map((part) => part.text).join("");

/** The client's conversation as engine messages (OpenAI shapes in, ours out). */
export function toConversation(messages: readonly RequestMessage[]): ChatMessage[] {
  const callNames = new Map<string, string>();
  return messages.map((message): ChatMessage => {
    switch (message.role) {
      case "system":
      case "developer":
        return { role: "system", content: textOf(message.content) };
      case "user":
        return { role: "user", content: toParts(message.content) };
      case "assistant": {
        const calls = (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
        for (const call of calls) callNames.set(call.id, call.name);
        return calls.length > 0 ? { role: "assistant", content: textOf(message.content), tool_calls: calls } : { role: "assistant", content: textOf(message.content) };
      }
      case "tool":
        return { role: "tool", tool_call_id: message.tool_call_id, name: callNames.get(message.tool_call_id) ?? "", content: textOf(message.content) };
    }
  });
}

/** `tools` as our specs; none (or an empty list) means the agent's own tools. */
export function toClientTools(request: ChatRequest): ToolSpec[] | undefined {
  const tools = request.tools ?? [];
  if (tools.length === 0) return undefined;
  return tools.map(({ function: fn }) => ({
    name: fn.name,
    ...(fn.description === undefined ? {} : { description: fn.description }),
    parameters: fn.parameters ?? { type: "object", properties: {} },
  }));
}

/** Sampling and output fields that override the agent's config for this request (read as every dialect reads them). */
export function toOverrides(request: ChatRequest): SamplingOverrides {
  const format = request.response_format;
  const choice = request.tool_choice;
  return toSamplingOverrides({
    ...request,
    max_tokens: request.max_completion_tokens ?? request.max_tokens,
    format: format == null || format.type !== "json_schema" ? format : { type: "json_schema", name: format.json_schema.name, schema: format.json_schema.schema, strict: format.json_schema.strict },
    tool_choice: choice == null || typeof choice === "string" ? choice : { name: choice.function.name },
  });
}

/** Fields we cannot honour are refused with a 400 naming them, never silently ignored. */
export function assertSupported(request: ChatRequest): void {
  const refuse = (param: string, message: string): never => {
    throw new RuntimeError("invalid_request", `${param}: ${message}`, { details: { param } });
  };
  if (request.n != null && request.n > 1) refuse("n", "only n = 1 is supported (one choice per request)");
  if (request.logprobs === true) refuse("logprobs", "log probabilities are not supported");
  if (request.top_logprobs != null && request.top_logprobs > 0) refuse("top_logprobs", "log probabilities are not supported");
  const choice = request.tool_choice;
  if (choice != null && typeof choice === "object" && !(request.tools ?? []).some((tool) => tool.function.name === choice.function.name)) {
    refuse("tool_choice", `names a function "${choice.function.name}" that is not in tools`);
  }
}

/** Fields we do not read, listed so a client knows they had no effect. */
export function ignoredFieldWarnings(body: unknown): string[] {
  if (body === null || typeof body !== "object") return [];
  return Object.keys(body)
    .filter((key) => !KNOWN_FIELDS.has(key))
    .map((key) => `ignored field "${key.slice(0, 64)}": not supported by this server`);
}

/**
 * OpenAI clients send free-form `user` ids (emails, UUIDs); a session folder needs a safe name.
 * A safe id is used as it is; anything else becomes a stable hash, so the same user keeps the
 * same id and the raw string never reaches a path.
 */
export function userIdFor(user: string | undefined): string {
  if (user === undefined) return "default_user";
  if (isSafeId(user)) return user;
  return `u_${createHash("sha256").update(user).digest("hex").slice(0, 32)}`;
}
