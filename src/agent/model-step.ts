import type { ChatMessage, ToolCall, ToolSpec } from "../engine/chat-types.js";
import type { Engine } from "../engine/engine.js";
import type { EmitEvent } from "./events.js";
import { extractTextToolCalls, type TextToolCall } from "./text-tool-calls.js";
import { ThinkSplitter } from "./think-splitter.js";

export interface ModelStepInput {
  engine: Engine;
  messages: ChatMessage[];
  tools: ToolSpec[];
  temperature: number;
  maxTokens: number;
  seed: number | null;
  step: number;
  signal: AbortSignal;
  emit: EmitEvent;
}

export interface ModelStepOutput {
  /** Answer text without reasoning and without text-format tool call blocks. */
  text: string;
  calls: Array<ToolCall & { error?: string }>;
}

/**
 * One model step: streams answer text as `llm_chunk`, reasoning (engine channel or inline
 * `<think>`) as `thinking_chunk`, usage as `usage`, and collects tool calls: native ones from the
 * engine, or the documented text format when the engine produced none.
 */
export async function runModelStep(input: ModelStepInput): Promise<ModelStepOutput> {
  const { step, emit } = input;
  const splitter = new ThinkSplitter();
  const native: ToolCall[] = [];
  let text = "";
  const onText = (part: { text: string; thinking: string }): void => {
    if (part.thinking !== "") emit({ event: "thinking_chunk", step, delta: part.thinking });
    if (part.text !== "") {
      text += part.text;
      emit({ event: "llm_chunk", step, delta: part.text });
    }
  };
  const stream = input.engine.generate({
    messages: input.messages,
    ...(input.tools.length > 0 ? { tools: input.tools } : {}),
    temperature: input.temperature,
    maxTokens: input.maxTokens,
    seed: input.seed,
    signal: input.signal,
  });
  for await (const chunk of stream) {
    switch (chunk.type) {
      case "text":
        onText(splitter.push(chunk.delta));
        break;
      case "reasoning":
        emit({ event: "thinking_chunk", step, delta: chunk.delta });
        break;
      case "tool_call":
        native.push(chunk.call);
        break;
      case "usage":
        emit({ event: "usage", step, input_tokens: chunk.inputTokens, output_tokens: chunk.outputTokens });
        break;
      case "tool_call_start":
      case "tool_call_delta":
      case "end":
        break;
      default: {
        const unreachable: never = chunk;
        throw new Error(`unknown engine chunk ${JSON.stringify(unreachable)}`);
      }
    }
  }
  onText(splitter.flush());
  if (native.length > 0) return { text, calls: native };
  const fallback = extractTextToolCalls(text);
  return { text: fallback.rest, calls: fallback.calls.map((call: TextToolCall) => call) };
}
