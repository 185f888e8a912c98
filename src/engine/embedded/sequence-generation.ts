import { randomBytes } from "node:crypto";
import type { ChatWrapper, Llama, LlamaContextSequence } from "node-llama-cpp";
import type { EngineChunk, FinishReason, GenerateRequest } from "../chat-types.js";
import type { ToolCall } from "../../shared/conversation/chat-message.js";
import { grammarFor, offeredTools, repeatPenaltyOf } from "./generation-options.js";
import { toChatFunctions } from "../llama/to-chat-functions.js";
import { toChatHistory, withOpenModelTurn } from "../llama/to-chat-history.js";
import { promptTokensFor } from "../llama/prompt-tokens.js";
import { prefillPrompt } from "./prompt-prefill.js";

export interface SequenceGeneration {
  /** A sequence of the pool, lent to this generation (the conversation's KV state in it). */
  sequence: LlamaContextSequence;
  chatWrapper: ChatWrapper;
  request: GenerateRequest;
  signal: AbortSignal;
  /** Text, reasoning and tool-call deltas as they stream. */
  emit: (chunk: EngineChunk) => void;
  /** The node-llama-cpp instance (a response_format grammar is built on it). */
  llama: () => Promise<Llama>;
}

/**
 * One chat generation on a lent sequence with node-llama-cpp's LlamaChat: deltas are emitted as
 * they stream; resolves with the final chunks (tool calls, usage with the cached prompt tokens,
 * the end and its finish reason).
 */
export async function generateOnSequence(generation: SequenceGeneration): Promise<EngineChunk[]> {
  const { sequence, chatWrapper, request, signal, emit, llama } = generation;
  const { LlamaChat } = await import("node-llama-cpp");
  // response_format: a grammar from the schema (node-llama-cpp cannot combine it with functions).
  const grammar = await grammarFor(request, llama);
  const chat = new LlamaChat({ contextSequence: sequence, chatWrapper, autoDisposeSequence: false });
  const outputBefore = sequence.tokenMeter.getState().usedOutputTokens;
  const inputBefore = sequence.tokenMeter.getState().usedInputTokens;
  const started = new Map<number, { id: string; name: string; text: string }>();
  const tools = grammar === null ? offeredTools(request) : [];
  // The prompt as LlamaChat renders it: the exact count for usage (the sequence's tokens after
  // generation lack the last generated token, which is never evaluated).
  const promptTokens = promptTokensFor(sequence.model, chatWrapper, request, tools);
  // Prompt time: from here to the first generated token (or the end, for an answer with none).
  const readFrom = performance.now();
  let promptMs: number | null = null;
  const firstToken = (): void => {
    promptMs ??= performance.now() - readFrom;
  };
  const rendered = promptTokens?.length;
  try {
    // Read in chunks first: cancellable within one chunk, with progress; LlamaChat then finds it all in the sequence.
    if (promptTokens !== undefined) await prefillPrompt(sequence, promptTokens, signal, request.onPromptProgress);
    const response = await chat.generateResponse(withOpenModelTurn(toChatHistory(request.messages)), {
      signal,
      maxTokens: request.maxTokens,
      temperature: request.temperature,
      ...(request.seed === null || request.seed === undefined ? {} : { seed: request.seed }),
      ...(request.topP === undefined ? {} : { topP: request.topP }),
      ...(request.topK === undefined ? {} : { topK: request.topK }),
      ...(request.stop !== undefined && request.stop.length > 0 ? { customStopTriggers: request.stop } : {}),
      repeatPenalty: repeatPenaltyOf(request),
      onResponseChunk: (chunk) => {
        firstToken();
        if (chunk.text === "") return;
        if (chunk.type === "segment") {
          if (chunk.segmentType === "thought") emit({ type: "reasoning", delta: chunk.text });
        } else {
          emit({ type: "text", delta: chunk.text });
        }
      },
      ...(tools.length > 0
        ? {
            functions: toChatFunctions(tools),
            ...(request.parallelToolCalls === false ? { maxParallelFunctionCalls: 1 } : {}),
            onFunctionCallParamsChunk: (chunk) => {
              firstToken();
              let call = started.get(chunk.callIndex);
              if (!call) {
                call = { id: `call_${randomBytes(6).toString("hex")}`, name: chunk.functionName, text: "" };
                started.set(chunk.callIndex, call);
                emit({ type: "tool_call_start", index: chunk.callIndex, id: call.id, name: call.name });
              }
              if (chunk.paramsChunk !== "") {
                call.text += chunk.paramsChunk;
                emit({ type: "tool_call_delta", index: chunk.callIndex, delta: chunk.paramsChunk });
              }
            },
          }
        : grammar === null ? {} : { grammar }),
    });
    const calls: ToolCall[] = (response.functionCalls ?? []).map((functionCall, index) => {
      const streamed = started.get(index);
      const call: ToolCall = {
        id: streamed?.id ?? `call_${randomBytes(6).toString("hex")}`,
        name: functionCall.functionName,
        arguments: JSON.stringify(functionCall.params ?? {}),
      };
      if (!streamed) emit({ type: "tool_call_start", index, id: call.id, name: call.name });
      return call;
    });
    const outputTokens = sequence.tokenMeter.getState().usedOutputTokens - outputBefore;
    const chunks: EngineChunk[] = calls.map((call, index) => ({ type: "tool_call", index, call }));
    // Prompt tokens the sequence already held (a shared prefix) were not evaluated again.
    const held = Math.max(0, sequence.contextTokens.length - outputTokens);
    const inputTokens = rendered ?? held;
    const evaluated = sequence.tokenMeter.getState().usedInputTokens - inputBefore;
    chunks.push({ type: "usage", inputTokens, outputTokens, cachedTokens: Math.max(0, held - evaluated), promptMs: Math.round(promptMs ?? performance.now() - readFrom) });
    const stopSequence = stopSequenceOf(response.metadata, request.stop);
    chunks.push({ type: "end", finishReason: finishReasonOf(response.metadata.stopReason, calls.length), ...(stopSequence === undefined ? {} : { stopSequence }) });
    return chunks;
  } finally {
    chat.dispose({ disposeSequence: false });
  }
}

function finishReasonOf(stopReason: string, calls: number): FinishReason {
  if (calls > 0 || stopReason === "functionCalls") return "tool_calls";
  if (stopReason === "maxTokens") return "length";
  if (stopReason === "abort") return "cancelled";
  return "stop";
}

/** The request's stop string that ended the text (node-llama-cpp names the trigger it matched). */
function stopSequenceOf(metadata: { stopReason: string; customStopTrigger?: readonly unknown[] }, stops: readonly string[] | undefined): string | undefined {
  if (metadata.stopReason !== "customStopTrigger" || stops === undefined) return undefined;
  const matched = (metadata.customStopTrigger ?? []).filter((part): part is string => typeof part === "string").join("");
  return stops.find((stop) => stop === matched) ?? stops.find((stop) => matched !== "" && stop.startsWith(matched)) ?? stops[0];
}
