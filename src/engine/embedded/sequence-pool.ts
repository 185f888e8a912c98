import type { LlamaContext, LlamaContextSequence, Token } from "node-llama-cpp";
import { abortError } from "../../shared/abort.js";

/** The share of a sequence's tokens a prompt must repeat to count as continuing its conversation. */
export const CONTINUATION = 0.75;

interface Waiter {
  resolve: (sequence: LlamaContextSequence) => void;
  reject: (error: unknown) => void;
  signal?: AbortSignal;
  onAbort: () => void;
}

/**
 * Parallel chats on one model use separate sequences of one context. A returned sequence keeps its
 * tokens (its KV cache), so a chat is given the free sequence whose tokens share the longest prefix
 * with its prompt: the same conversation's next turn evaluates only what is new, and `parallel: N`
 * keeps N conversations warm. Among sequences that share nothing, the least recently used is
 * taken (evicted). A chat waits (abortably) when every sequence is busy.
 */
export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly lastUsed = new Map<LlamaContextSequence, number>();
  private readonly waiters: Waiter[] = [];
  private clock = 0;

  constructor(context: LlamaContext, size: number) {
    for (let i = 0; i < size; i++) {
      const sequence = context.getSequence();
      this.free.push(sequence);
      this.lastUsed.set(sequence, 0);
    }
  }

  get available(): number {
    return this.free.length;
  }

  /** Every sequence of the pool, free or lent. */
  get sequences(): readonly LlamaContextSequence[] {
    return [...this.lastUsed.keys()];
  }

  /**
   * `prompt`: the tokens the chat will evaluate, to find the sequence that already holds most of
   * them; a function is called only when there is a choice (more than one free sequence), since
   * rendering and tokenizing the prompt is work on the time-to-first-token path.
   */
  acquire(signal?: AbortSignal, prompt?: readonly Token[] | (() => readonly Token[] | undefined)): Promise<LlamaContextSequence> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.free.length === 1) return Promise.resolve(this.take(0));
    if (this.free.length > 1) return Promise.resolve(this.take(this.pick(typeof prompt === "function" ? prompt() : prompt)));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (sequence) => resolve(this.touch(sequence)),
        reject,
        ...(signal ? { signal } : {}),
        onAbort: () => {
          const index = this.waiters.indexOf(waiter);
          if (index !== -1) this.waiters.splice(index, 1);
          reject(abortError(signal as AbortSignal));
        },
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  release(sequence: LlamaContextSequence): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.signal?.removeEventListener("abort", waiter.onAbort);
      waiter.resolve(sequence);
      return;
    }
    this.free.push(sequence);
  }

  /**
   * A sequence whose tokens the prompt continues (it shares at least CONTINUATION of them: the
   * tail may differ where the reply was tokenized differently) is the best: most of the prompt is
   * cached. Taking any other destroys its conversation's cache, so an empty sequence goes first
   * and only then the least recently used. Sharing just the system prompt is no reason to steal
   * another conversation's sequence.
   */
  private pick(prompt: readonly Token[] | undefined): number {
    let best = -1;
    let bestShared = 0;
    for (const [index, sequence] of this.free.entries()) {
      const held = sequence.contextTokens.length;
      const shared = prompt === undefined || held === 0 ? 0 : sharedPrefix(sequence.contextTokens, prompt);
      if (shared > 0 && shared >= held * CONTINUATION && shared > bestShared) {
        best = index;
        bestShared = shared;
      }
    }
    if (best !== -1) return best;
    const empty = this.free.findIndex((sequence) => sequence.contextTokens.length === 0);
    if (empty !== -1) return empty;
    let oldest = 0;
    for (const [index, sequence] of this.free.entries()) {
      if ((this.lastUsed.get(sequence) ?? 0) < (this.lastUsed.get(this.free[oldest] as LlamaContextSequence) ?? 0)) oldest = index;
    }
    return oldest;
  }

  private take(index: number): LlamaContextSequence {
    const [sequence] = this.free.splice(index, 1) as [LlamaContextSequence];
    return this.touch(sequence);
  }

  private touch(sequence: LlamaContextSequence): LlamaContextSequence {
    this.lastUsed.set(sequence, ++this.clock);
    return sequence;
  }
}

/** How many leading tokens two token lists have in common. */
export function sharedPrefix(a: readonly Token[], b: readonly Token[]): number {
  const length = Math.min(a.length, b.length);
  let i = 0;
  while (i < length && a[i] === b[i]) i++;
  return i;
}

/** Whether two token lists are the same. */
export function sameTokens(a: readonly Token[], b: readonly Token[]): boolean {
  return a.length === b.length && sharedPrefix(a, b) === a.length;
}
