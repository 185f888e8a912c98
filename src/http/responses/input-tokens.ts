import { messageTokens } from "../../agent/message-tokens.js";
import type { ChatMessage, ToolSpec } from "../../engine/chat-types.js";
import type { Engine } from "../../engine/engine.js";
import { RuntimeError } from "../../shared/runtime-error.js";

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
  for (const message of messages) total += await messageTokens(message, (text) => count(text, signal));
  if (tools.length > 0 && engine.toolTokens !== undefined) total += await engine.toolTokens(tools, signal);
  return total;
}
