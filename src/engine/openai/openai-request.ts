// Our engine-neutral request -> the OpenAI chat.completions streaming body.
// Kept separate from the stream loop so the wire shape can be read (and tested) on its own.
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { ChatMessage } from "../../shared/conversation/chat-message.js";
import type { GenerateRequest } from "../chat-types.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";

export function toOpenAiMessages(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  return messages.map((message): ChatCompletionMessageParam => {
    switch (message.role) {
      case "system":
        return { role: "system", content: message.content };
      case "user":
        // Our ContentPart is the OpenAI part shape already (text / image_url), so parts pass through.
        return { role: "user", content: message.content };
      case "assistant":
        if (message.tool_calls !== undefined && message.tool_calls.length > 0) {
          return {
            role: "assistant",
            content: message.content,
            tool_calls: message.tool_calls.map((call) => ({
              id: call.id,
              type: "function" as const,
              function: { name: call.name, arguments: call.arguments },
            })),
          };
        }
        return { role: "assistant", content: message.content };
      case "tool":
        // OpenAI's tool message has no `name`; the id ties the result to its call.
        return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
    }
  });
}

export function toOpenAiTools(tools: readonly ToolSpec[]): ChatCompletionTool[] {
  return tools.map((tool) => ({
    type: "function" as const,
    function: {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      parameters: tool.parameters,
    },
  }));
}

/**
 * The streaming body. `max_tokens` (not `max_completion_tokens`) because llama-server, vLLM and
 * Ollama all understand it. `extraBody` (e.g. llama-server's `cache_prompt`, `id_slot`) is spread
 * first so it can add fields but never clobber model/messages/stream.
 */
export function buildChatBody(
  model: string,
  request: GenerateRequest,
  extraBody: Record<string, unknown> = {},
): ChatCompletionCreateParamsStreaming {
  const tools = request.tools ?? [];
  const body: ChatCompletionCreateParamsStreaming = {
    ...extraBody,
    model,
    messages: toOpenAiMessages(request.messages),
    stream: true,
    stream_options: { include_usage: true },
    temperature: request.temperature,
    max_tokens: request.maxTokens,
  };
  if (tools.length > 0) {
    body.tools = toOpenAiTools(tools);
    if (request.toolChoice !== undefined) {
      body.tool_choice = typeof request.toolChoice === "string" ? request.toolChoice : { type: "function", function: { name: request.toolChoice.name } };
    }
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  if (request.seed !== undefined && request.seed !== null) body.seed = request.seed;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop !== undefined && request.stop.length > 0) body.stop = request.stop;
  if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
  if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort;
  const format = request.responseFormat;
  if (format !== undefined && format.type !== "text") {
    body.response_format = format.type === "json_object"
      ? { type: "json_object" }
      : { type: "json_schema", json_schema: { name: format.name, schema: format.schema, ...(format.strict === undefined ? {} : { strict: format.strict }) } };
  }
  return body;
}
