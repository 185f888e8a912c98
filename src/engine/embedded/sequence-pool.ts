import type { LlamaContext, LlamaContextSequence } from "node-llama-cpp";
import { abortError } from "../../shared/abort.js";

/**
 * Parallel chats on one model use separate sequences of one context. A chat waits (abortably)
 * when every sequence is busy. A returned sequence keeps its tokens, so the next chat with the
 * same prefix (the same session's history) reuses the KV cache.
 */
export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly waiters: Array<{ resolve: (sequence: LlamaContextSequence) => void; reject: (error: unknown) => void; signal?: AbortSignal; onAbort: () => void }> = [];

  constructor(context: LlamaContext, size: number) {
    for (let i = 0; i < size; i++) this.free.push(context.getSequence());
  }

  get available(): number {
    return this.free.length;
  }

  acquire(signal?: AbortSignal): Promise<LlamaContextSequence> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const sequence = this.free.pop();
    if (sequence) return Promise.resolve(sequence);
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve,
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
}
