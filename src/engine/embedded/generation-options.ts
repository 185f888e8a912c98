import type { Llama, LlamaGrammar, LLamaContextualRepeatPenalty } from "node-llama-cpp";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { GenerateRequest } from "../chat-types.js";
import type { ToolSpec } from "../../shared/conversation/tool-spec.js";
import { stripUnsupported } from "../llama/to-chat-functions.js";

/**
 * OpenAI's `response_format` as a node-llama-cpp grammar, so the output is valid JSON (matching
 * the schema) by construction. A schema the grammar builder cannot express is a 400 naming the
 * field; JSON output and tool calls together cannot be constrained at once (node-llama-cpp takes
 * one or the other), so that combination is refused too.
 */
export async function grammarFor(request: GenerateRequest, llama: () => Promise<Llama>): Promise<LlamaGrammar | null> {
  const format = request.responseFormat;
  if (format === undefined || format.type === "text") return null;
  if (offeredTools(request).length > 0) {
    throw new RuntimeError("invalid_params", "response_format with tools is not supported by the embedded engine: send one or the other", { details: { param: "response_format" } });
  }
  const instance = await llama();
  if (format.type === "json_object") return instance.getGrammarFor("json");
  try {
    return await instance.createGrammarForJsonSchema(stripUnsupported(format.schema) as never);
  } catch (error) {
    throw new RuntimeError("invalid_params", `response_format.json_schema.schema cannot be enforced: ${(error as Error).message}`, {
      details: { param: "response_format.json_schema.schema" },
      cause: error,
    });
  }
}

/** The functions the model is offered: a named `tool_choice` narrows them to that one. */
export function offeredTools(request: GenerateRequest): ToolSpec[] {
  const tools = request.tools ?? [];
  const choice = request.toolChoice;
  if (choice !== undefined && typeof choice === "object") return tools.filter((tool) => tool.name === choice.name);
  return tools;
}

/**
 * OpenAI's penalties (-2..2) onto node-llama-cpp's (0..1, on the recently generated tokens).
 * Negative values (encouraging repetition) have no counterpart and are treated as 0. Without
 * either, no penalty is applied (as before: greedy output stays exactly reproducible).
 */
export function repeatPenaltyOf(request: GenerateRequest): false | LLamaContextualRepeatPenalty {
  const frequency = clampPenalty(request.frequencyPenalty);
  const presence = clampPenalty(request.presencePenalty);
  if (frequency === 0 && presence === 0) return false;
  return { penalty: 1, frequencyPenalty: frequency, presencePenalty: presence };
}

function clampPenalty(value: number | undefined): number {
  if (value === undefined || value <= 0) return 0;
  return Math.min(1, value);
}
