import { contentText, type ChatMessage, type ToolSpec } from "../../engine/chat-types.js";
import type { Engine } from "../../engine/engine.js";
import { RuntimeError } from "../../shared/runtime-error.js";

/** What a chat template adds around each message (role markers, separators), as the context budget counts it. */
const PER_MESSAGE_OVERHEAD = 8;

const textOf = (message: ChatMessage): string => {
  switch (message.role) {
    case "user":
      return contentText(message.content);
    case "assistant":
      return `${message.content}${(message.tool_calls ?? []).map((call) => `${call.name}${call.arguments}`).join("")}`;
    default:
      return message.content;
  }
};

/**
 * POST /v1/responses/input_tokens: the request's messages counted with the model's tokenizer, plus
 * the tools as its chat template renders them, counted the way the context budget counts a turn
 * (the agent's own system prompt is not included). An engine without a tokenizer (openai) cannot
 * count: a 400 naming the model.
 */
export async function countInputTokens(engine: Engine, messages: readonly ChatMessage[], tools: readonly ToolSpec[], signal: AbortSignal): Promise<number> {
  const count = engine.countTokens?.bind(engine);
  if (count === undefined) {
    throw new RuntimeError("invalid_request", `model: the ${engine.kind} engine of "${engine.modelName}" has no tokenizer to count with`, { details: { param: "model" } });
  }
  let total = 0;
  for (const message of messages) {
    const text = textOf(message);
    total += PER_MESSAGE_OVERHEAD + (text === "" ? 0 : await count(text, signal));
  }
  if (tools.length > 0 && engine.toolTokens !== undefined) total += await engine.toolTokens(tools, signal);
  return total;
}
