import type { LlamaContextSequence, Token } from "node-llama-cpp";
import type { PromptProgress } from "../chat-types.js";
import { RuntimeError } from "../../shared/runtime-error.js";

/** About this much evaluation work per chunk: short enough that a cancel lands fast, long enough that the pauses cost nothing. */
const CHUNK_TARGET_MS = 500;
/**
 * The first chunk: each evaluation has a fixed cost (a graph run and its thread barriers, which on
 * an oversubscribed CPU cost a scheduler slice each), so chunks are as large as the target allows:
 * on a busy 2-core machine 32-token chunks read a prompt 6x slower than one-shot, 128-token ones
 * 1.2-1.35x (docs/benchmarks.md, "Long prompts").
 */
const FIRST_CHUNK = 256;
/** The smallest chunk near the start: only a machine so busy that 128 tokens take over 0.5 s gets there; a cancel must still land within about a second. */
const MIN_CHUNK = 64;
/**
 * Deep in a prompt every evaluation reads the whole KV cache so far once more, a cost per chunk that
 * grows with the position: at 10 k tokens on one thread 64-token chunks read 8 % slower than
 * one-shot and 128-token ones 1 % (docs/benchmarks.md, "Chunk size against depth"). Past this
 * position the floor is 128 tokens, about a second of work there on a laptop-class core.
 */
const DEEP_POSITION = 4096;
const DEEP_MIN_CHUNK = 128;

/**
 * Reads a prompt into `sequence` in chunks before LlamaChat generates on it, so that reading a long
 * prompt can be stopped and watched: `signal` is checked between chunks (a cancel stops within one
 * chunk, about half a second of work), and `onProgress` hears how far it got. What was read
 * stays in the sequence: LlamaChat then evaluates only the prompt's last token, and a retry of the
 * same conversation (the pool hands it the sequence that holds the prefix; the KV keeper saves it
 * on eviction) continues from where this one stopped.
 *
 * Leaves the sequence alone when the prompt does not fit the context (LlamaChat's own context
 * shift then decides what is kept).
 */
export async function prefillPrompt(sequence: LlamaContextSequence, tokens: readonly Token[], signal: AbortSignal, onProgress?: (progress: PromptProgress) => void): Promise<void> {
  const total = tokens.length;
  if (total < 2 || total >= sequence.contextSize) return;
  const wanted = tokens as Token[];
  // Erase what differs from the prompt (a conversation that went another way), keep the shared prefix.
  if (sequence.compareContextTokens(wanted).firstDifferentIndex < sequence.nextTokenIndex) await sequence.adaptStateToTokens(wanted, false);
  const cached = Math.min(sequence.nextTokenIndex, total);
  let position = cached;
  // The last token is LlamaChat's to evaluate: that evaluation yields the first generated token.
  const end = total - 1;
  onProgress?.({ processed: position, total, cached });
  let size = Math.min(FIRST_CHUNK, sequence.context.batchSize);
  while (position < end) {
    if (signal.aborted) throw new RuntimeError("cancelled", "Generation cancelled while reading the prompt");
    const chunk = wanted.slice(position, Math.min(end, position + size));
    const started = performance.now();
    await sequence.evaluateWithoutGeneratingNewTokens(chunk);
    position += chunk.length;
    const ms = performance.now() - started;
    size = nextChunkSize(size, chunk.length, ms, sequence.context.batchSize, position);
    onProgress?.({ processed: position === end ? total : position, total, cached });
  }
  if (signal.aborted) throw new RuntimeError("cancelled", "Generation cancelled while reading the prompt");
}

/**
 * The chunk size that takes about CHUNK_TARGET_MS at the speed just measured, within [floor, batchSize],
 * the floor being MIN_CHUNK, or DEEP_MIN_CHUNK once `position` (the tokens in the sequence) is past DEEP_POSITION.
 */
export function nextChunkSize(current: number, evaluated: number, ms: number, batchSize: number, position: number): number {
  const floor = Math.min(position >= DEEP_POSITION ? DEEP_MIN_CHUNK : MIN_CHUNK, batchSize);
  if (evaluated < current || ms <= 0) return Math.max(floor, current);
  const fitting = Math.round((evaluated / ms) * CHUNK_TARGET_MS);
  // At most 2x a step either way: one fast or slow chunk (a burst, a preempted thread) is not a speed.
  return Math.max(floor, Math.min(batchSize, fitting, current * 2), Math.floor(current / 2));
}
