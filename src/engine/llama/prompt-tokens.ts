import type { ChatWrapper, LlamaModel, Token } from "node-llama-cpp";
import type { GenerateRequest } from "../chat-types.js";
import { toChatFunctions } from "./to-chat-functions.js";
import { toChatHistory, withOpenModelTurn } from "./to-chat-history.js";

/**
 * The tokens a chat request will evaluate, rendered by the same chat wrapper LlamaChat uses. Only
 * used to pick the sequence whose KV cache holds most of them, so a wrapper that cannot render it
 * ahead of time just means no preference (undefined).
 */
export function promptTokensFor(model: LlamaModel, chatWrapper: ChatWrapper, request: GenerateRequest, tools: GenerateRequest["tools"]): Token[] | undefined {
  try {
    const chatHistory = withOpenModelTurn(toChatHistory(request.messages));
    const functions = tools !== undefined && tools.length > 0 ? toChatFunctions(tools) : undefined;
    const { contextText } = chatWrapper.generateContextState({ chatHistory, ...(functions ? { availableFunctions: functions, documentFunctionParams: true } : {}) });
    return contextText.tokenize(model.tokenizer);
  } catch {
    return undefined;
  }
}
