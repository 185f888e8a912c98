/**
 * Bridges callback-style producers to an async iterator. Unbounded by design for token streams
 * (one entry per token, consumed as fast as produced); `close` and `fail` end it.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | null = null;
  private rejectWaiting: ((error: unknown) => void) | null = null;
  private done = false;
  private error: { value: unknown } | null = null;

  push(item: T): void {
    if (this.done) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.clearWaiter();
      resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  close(): void {
    if (this.done) return;
    this.done = true;
    if (this.waiting) {
      const resolve = this.waiting;
      this.clearWaiter();
      resolve({ value: undefined, done: true });
    }
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.done = true;
    this.error = { value: error };
    if (this.rejectWaiting) {
      const reject = this.rejectWaiting;
      this.clearWaiter();
      reject(error);
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        // The producer's error is passed through as thrown (engines fail with RuntimeError).
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        if (this.error) return Promise.reject(this.error.value);
        if (this.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.waiting = resolve;
          this.rejectWaiting = reject;
        });
      },
      return: () => {
        this.done = true;
        this.items = [];
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private clearWaiter(): void {
    this.waiting = null;
    this.rejectWaiting = null;
  }
}
