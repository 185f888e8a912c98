/** What a counted stream reports to its owner (ManagedEngine's in-flight count and load accounting). */
export interface StreamHooks {
  /** The iteration started (before admission). */
  begin(): void;
  /** Resolves when the engine stream may open (the owner's admission); its value goes to firstChunk. */
  admitted(): Promise<boolean>;
  /** The first chunk arrived; `waited`: what admitted() resolved with. */
  firstChunk(waited: boolean): void;
  /** The stream failed (admission, open or a chunk). */
  failed(): void;
  /** The iteration is over, whichever way: exactly once after begin(). */
  end(): void;
}

/**
 * An engine stream with the owner's bookkeeping around it. A hand-written iterator instead of an
 * async generator that re-yields: each chunk passes with one `then` instead of the generator's
 * await/yield round trips, on the per-token path of every turn.
 */
export function countedStream<T>(open: () => AsyncIterable<T>, hooks: StreamHooks): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => new CountedIterator(open, hooks) };
}

class CountedIterator<T> implements AsyncIterator<T> {
  private inner: AsyncIterator<T> | null = null;
  /** The first next() while it waits for admission: calls made meanwhile queue behind it, as on an async generator. */
  private starting: Promise<IteratorResult<T>> | null = null;
  private state: "new" | "running" | "over" = "new";
  private waited = false;
  private first = true;

  constructor(
    private readonly open: () => AsyncIterable<T>,
    private readonly hooks: StreamHooks,
  ) {}

  next(): Promise<IteratorResult<T>> {
    if (this.state === "over") return Promise.resolve({ value: undefined, done: true });
    if (this.inner !== null) return this.pull(this.inner);
    if (this.starting === null) return (this.starting = this.start());
    return this.starting.then(() => this.next(), () => this.next());
  }

  async return(): Promise<IteratorResult<T>> {
    // Closed while admission is pending: the engine stream opens first, then is closed.
    await this.starting?.catch(() => undefined);
    const inner = this.inner;
    if (this.state === "running") {
      try {
        await inner?.return?.();
      } finally {
        this.finish();
      }
    }
    this.state = "over";
    return { value: undefined, done: true };
  }

  private async start(): Promise<IteratorResult<T>> {
    this.state = "running";
    this.hooks.begin();
    try {
      this.waited = await this.hooks.admitted();
      this.inner = this.open()[Symbol.asyncIterator]();
    } catch (error) {
      this.fail();
      throw error;
    }
    return this.pull(this.inner);
  }

  private pull(inner: AsyncIterator<T>): Promise<IteratorResult<T>> {
    return inner.next().then(this.onResult, this.onError);
  }

  private readonly onResult = (result: IteratorResult<T>): IteratorResult<T> => {
    if (result.done === true) this.finish();
    else if (this.first) {
      this.first = false;
      this.hooks.firstChunk(this.waited);
    }
    return result;
  };

  private readonly onError = (error: unknown): never => {
    this.fail();
    throw error;
  };

  private fail(): void {
    if (this.state !== "running") return;
    this.hooks.failed();
    this.finish();
  }

  private finish(): void {
    if (this.state !== "running") return;
    this.state = "over";
    this.hooks.end();
  }
}
