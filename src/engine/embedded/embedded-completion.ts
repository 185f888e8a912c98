import type { LlamaCompletionResponse, LlamaContextSequence } from "node-llama-cpp";
import { AsyncQueue } from "../../shared/async-queue.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { CompletionChunk, CompletionRequest } from "../completion-types.js";

/** A sequence lent by the engine's pool (the one chats use), given back through `release`. */
export interface LentSequence {
  sequence: LlamaContextSequence;
  release(): void;
}

export interface CompletionHost {
  modelName: string;
  /** Loads the model if needed and waits (abortably) for a free sequence of the chat pool. */
  acquire(signal: AbortSignal): Promise<LentSequence>;
  /** Registers the generation so engine close() aborts it; returns the unregister function. */
  track(controller: AbortController): () => void;
}

/**
 * Plain text completion on the embedded engine: node-llama-cpp's LlamaCompletion (no chat
 * template) on a sequence borrowed from the same pool as chats, so completions and chats share
 * `parallel` fairly and neither starves the other. `suffix` uses the model's fill-in-the-middle
 * tokens; a model without them refuses a non-empty suffix.
 */
export function completeEmbedded(request: CompletionRequest, host: CompletionHost): AsyncIterable<CompletionChunk> {
  const queue = new AsyncQueue<CompletionChunk>();
  void run(request, host, queue);
  return queue;
}

async function run(request: CompletionRequest, host: CompletionHost, queue: AsyncQueue<CompletionChunk>): Promise<void> {
  // Our own controller: the caller's abort and engine close() both stop generation at once.
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(request.signal?.reason);
  request.signal?.addEventListener("abort", onAbort, { once: true });
  if (request.signal?.aborted === true) controller.abort(request.signal.reason);
  const untrack = host.track(controller);
  const { signal } = controller;
  let lent: LentSequence | null = null;
  try {
    lent = await host.acquire(signal);
    const chunks = await generate(lent.sequence, request, host.modelName, signal, (delta) => {
      if (!signal.aborted && delta !== "") queue.push({ type: "text", delta });
    });
    if (signal.aborted) throw new RuntimeError("cancelled", "Completion cancelled");
    for (const chunk of chunks) queue.push(chunk);
    queue.close();
  } catch (error) {
    queue.fail(signal.aborted ? new RuntimeError("cancelled", "Completion cancelled", { cause: error }) : toCompletionError(error));
  } finally {
    request.signal?.removeEventListener("abort", onAbort);
    untrack();
    lent?.release();
  }
}

async function generate(
  sequence: LlamaContextSequence,
  request: CompletionRequest,
  modelName: string,
  signal: AbortSignal,
  onText: (delta: string) => void,
): Promise<CompletionChunk[]> {
  const { LlamaCompletion } = await import("node-llama-cpp");
  const completion = new LlamaCompletion({ contextSequence: sequence, autoDisposeSequence: false });
  const outputBefore = sequence.tokenMeter.getState().usedOutputTokens;
  try {
    const infill = request.suffix !== undefined && (request.suffix !== "" || completion.infillSupported);
    if (infill && !completion.infillSupported) {
      throw new RuntimeError("invalid_request", `suffix: model "${modelName}" has no fill-in-the-middle tokens (GGUF tokenizer.ggml.prefix_token_id / suffix_token_id), so it cannot complete between a prompt and a suffix`, {
        details: { param: "suffix", openai_code: "unsupported_parameter" },
      });
    }
    const penalties = request.presencePenalty === undefined && request.frequencyPenalty === undefined;
    const options = {
      signal,
      maxTokens: request.maxTokens,
      temperature: request.temperature,
      ...(request.topP === undefined ? {} : { topP: request.topP }),
      ...(request.seed === undefined ? {} : { seed: request.seed }),
      // OpenAI's penalties default to 0; node-llama-cpp's repeat penalty is on unless disabled.
      repeatPenalty: penalties ? (false as const) : { presencePenalty: request.presencePenalty ?? 0, frequencyPenalty: request.frequencyPenalty ?? 0 },
      ...(request.stop.length > 0 ? { customStopTriggers: request.stop } : {}),
      onTextChunk: onText,
    };
    const response: LlamaCompletionResponse = infill
      ? await completion.generateInfillCompletionWithMeta(request.prompt, request.suffix ?? "", options)
      : await completion.generateCompletionWithMeta(request.prompt, options);
    const outputTokens = sequence.tokenMeter.getState().usedOutputTokens - outputBefore;
    return [
      { type: "usage", inputTokens: Math.max(0, sequence.contextTokens.length - outputTokens), outputTokens },
      { type: "end", finishReason: response.metadata.stopReason === "maxTokens" ? "length" : "stop" },
    ];
  } finally {
    completion.dispose({ disposeSequence: false });
  }
}

function toCompletionError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  return new RuntimeError("engine_error", `Embedded completion failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}
