import type { ChatMessage, ToolCall } from "../shared/conversation/chat-message.js";
import type { FinishReason, GenerateRequest } from "../engine/chat-types.js";
import type { ToolSpec } from "../shared/conversation/tool-spec.js";
import type { Engine } from "../engine/engine.js";
import type { EmitEvent } from "./events.js";
import { extractTextToolCalls, type TextToolCall } from "./text-tool-calls.js";
import { PromptProgressGate } from "./prompt-progress-gate.js";
import { ThinkSplitter } from "./think-splitter.js";

export interface ModelStepInput {
  engine: Engine;
  messages: ChatMessage[];
  tools: ToolSpec[];
  temperature: number;
  maxTokens: number;
  seed: number | null;
  /** Per-request controls (stop, penalties, response_format, tool_choice...) passed to the engine. */
  options?: StepOptions;
  step: number;
  signal: AbortSignal;
  emit: EmitEvent;
}

/** The engine controls a step may carry beyond temperature, max tokens and seed. */
export type StepOptions = Pick<GenerateRequest, "topP" | "topK" | "stop" | "frequencyPenalty" | "presencePenalty" | "responseFormat" | "toolChoice" | "parallelToolCalls" | "reasoningEffort" | "cacheKey">;

export interface ModelStepOutput {
  /** Answer text without reasoning and without text-format tool call blocks. */
  text: string;
  calls: Array<ToolCall & { error?: string }>;
  /** Why the engine stopped (`length` when max_tokens cut the answer). */
  finishReason: FinishReason;
  /** The request's stop string that ended the text, where the engine says (embedded). */
  stopSequence?: string;
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
  const progress = new PromptProgressGate(step, emit);
  const stream = input.engine.generate({
    messages: input.messages,
    ...(input.tools.length > 0 ? { tools: input.tools } : {}),
    temperature: input.temperature,
    maxTokens: input.maxTokens,
    seed: input.seed,
    ...definedOnly(input.options ?? {}),
    signal: input.signal,
    onModelLoad: (load) => emit({ event: "model_load", step, ...load }),
    onPromptProgress: progress.observe,
  });
  let finishReason: FinishReason = "stop";
  let stopSequence: string | undefined;
  try {
    for await (const chunk of stream) {
      // Any chunk means the prompt has been read.
      progress.done();
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
          emit({ event: "usage", step, input_tokens: chunk.inputTokens, output_tokens: chunk.outputTokens, ...(chunk.cachedTokens === undefined ? {} : { cached_input_tokens: chunk.cachedTokens }), ...(chunk.promptMs === undefined ? {} : { prompt_ms: chunk.promptMs }) });
          break;
        case "end":
          finishReason = chunk.finishReason;
          stopSequence = chunk.stopSequence;
          break;
        case "tool_call_start":
        case "tool_call_delta":
          break;
        default: {
          const unreachable: never = chunk;
          throw new Error(`unknown engine chunk ${JSON.stringify(unreachable)}`);
        }
      }
    }
  } finally {
    progress.close();
  }
  onText(splitter.flush());
  const ending = { finishReason, ...(stopSequence === undefined ? {} : { stopSequence }) };
  if (native.length > 0) return { text, calls: native, ...ending };
  const fallback = extractTextToolCalls(text);
  return { text: fallback.rest, calls: fallback.calls.map((call: TextToolCall) => call), ...ending };
}

/** Drops undefined values, so the engine request has only the keys that were given (exactOptionalPropertyTypes). */
function definedOnly<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as T;
}
