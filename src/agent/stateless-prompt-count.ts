import type { AgentConfig } from "../config/schema.js";
import type { Engine } from "../engine/engine.js";
import { RuntimeError } from "../shared/runtime-error.js";
import type { ToolProvider } from "../tools/tool-types.js";
import { messageTokens } from "./message-tokens.js";
import { renderForModel } from "./prompt.js";
import { splitConversation, type StatelessTurnRequest } from "./stateless-turn.js";
import { toolSpecsOf } from "./turn-settings.js";

/**
 * The prompt tokens the first model step of a stateless turn would evaluate: the agent's system
 * prompt with the client's system text, the conversation and the offered tools, rendered by the
 * model's chat template (the embedded engine; llama-server's /apply-template). An engine that
 * cannot render ahead of time counts the messages with its tokenizer, plus what a template adds
 * per message; one without a tokenizer (openai) cannot count: a 400 naming the model.
 */
export async function countStatelessPrompt(deps: { agent: AgentConfig; engine: Engine; tools: ToolProvider }, request: StatelessTurnRequest, signal: AbortSignal): Promise<number> {
  const { engine } = deps;
  const { system, history, turn } = splitConversation(deps.agent.system_prompt, request.messages);
  const messages = renderForModel([system, ...history, ...turn]);
  const noTools = request.overrides?.toolChoice === "none";
  const tools = noTools ? [] : (request.clientTools ?? toolSpecsOf(deps.tools.list(deps.agent.tools)));
  const exact = (await engine.promptTokens?.({ messages, tools }, signal)) ?? null;
  if (exact !== null) return exact;
  if (engine.countTokens === undefined) {
    throw new RuntimeError("invalid_request", `model: the ${engine.kind} engine of "${engine.modelName}" has no tokenizer to count with`, { details: { param: "model" } });
  }
  const count = engine.countTokens.bind(engine);
  let total = 0;
  // Counted as the context budget counts a message (text plus the template's overhead).
  for (const message of messages) total += await messageTokens(message, (text) => count(text, signal));
  if (tools.length > 0 && engine.toolTokens !== undefined) total += await engine.toolTokens(tools, signal);
  return total;
}
