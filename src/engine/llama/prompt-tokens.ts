import type { ChatWrapper, LlamaModel, LlamaText, Token } from "node-llama-cpp";
import type { GenerateRequest } from "../chat-types.js";
import { toChatFunctions } from "./to-chat-functions.js";
import { toChatHistory, withOpenModelTurn } from "./to-chat-history.js";
import { countTokensSliced } from "./sliced-tokenize.js";

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

/**
 * How many tokens promptTokensFor makes (count_tokens, input_tokens): the same tokens, with the rendered
 * text tokenized in slices that yield (sliced-tokenize.ts), as LlamaText.tokenize would.
 */
export async function promptTokenCount(model: LlamaModel, chatWrapper: ChatWrapper, request: GenerateRequest, tools: GenerateRequest["tools"], signal?: AbortSignal): Promise<number | undefined> {
  let contextText: LlamaText;
  try {
    const chatHistory = withOpenModelTurn(toChatHistory(request.messages));
    const functions = tools !== undefined && tools.length > 0 ? toChatFunctions(tools) : undefined;
    contextText = chatWrapper.generateContextState({ chatHistory, ...(functions ? { availableFunctions: functions, documentFunctionParams: true } : {}) }).contextText;
  } catch {
    return undefined;
  }
  // As LlamaText.tokenize does it: runs of plain text tokenized together (with "trimLeadingSpace":
  // it counts the text itself as content), special tokens and their text by themselves.
  let count = 0;
  let text = "";
  const flush = async (): Promise<void> => {
    if (text === "") return;
    count += await countTokensSliced(model, text, { specialTokens: false, trimLeadingSpace: true, signal });
    text = "";
  };
  for (const value of contextText.values) {
    if (typeof value === "string") {
      text += value;
      continue;
    }
    const content = count > 0 || text !== "";
    await flush();
    count += value.tokenize(model.tokenizer, content).length;
  }
  await flush();
  return count;
}
