import { LocalAiError } from "./local-ai-error.js";
import type { ChatEvent, ChatResult } from "./protocol-types.js";

/** One chat request in flight: its events as an async iterable, its result as a promise. */
export interface ChatTurn extends AsyncIterable<ChatEvent> {
  /** The request id (what `client.cancel(id)` takes). */
  readonly id: string;
  /** The chat result; rejects with a LocalAiError (`cancelled` after an abort, the error frame's code otherwise). */
  readonly result: Promise<ChatResult>;
  /** Events the host did not take in time and that could not be merged (see `maxBufferedEvents`). */
  readonly droppedEvents: number;
  /** Same as aborting the signal given to `chat()`. */
  cancel(): void;
}

type Outcome = { kind: "ok"; result: ChatResult } | { kind: "error"; error: LocalAiError };

/**
 * The buffer between the child's stdout and a host's `for await`. Bounded: while the host does
 * not consume, at most `capacity` events wait; beyond that a text delta is merged into the delta
 * before it (same event, same step: the text is kept whole) and any other event is dropped and
 * counted. Events are best-effort on the wire too; the result is never dropped.
 */
export class ChatTurnStream implements ChatTurn {
  readonly result: Promise<ChatResult>;
  private readonly buffer: ChatEvent[] = [];
  private waiter: { resolve: (result: IteratorResult<ChatEvent>) => void; reject: (error: unknown) => void } | null = null;
  private outcome: Outcome | null = null;
  private iterating = false;
  private detached = false;
  private dropped = 0;
  private settle!: { resolve: (result: ChatResult) => void; reject: (error: LocalAiError) => void };

  constructor(
    readonly id: string,
    private readonly capacity: number,
    private readonly onCancel: () => void,
  ) {
    this.result = new Promise<ChatResult>((resolve, reject) => (this.settle = { resolve, reject }));
    // A host that only iterates (the loop throws the same error) must not get an unhandled rejection.
    this.result.catch(() => undefined);
  }

  get droppedEvents(): number {
    return this.dropped;
  }

  cancel(): void {
    this.onCancel();
  }

  /** An event from the wire. */
  push(event: ChatEvent): void {
    if (this.outcome !== null || this.detached) return;
    if (this.waiter !== null) {
      const { resolve } = this.waiter;
      this.waiter = null;
      resolve({ value: event, done: false });
      return;
    }
    if (this.buffer.length < this.capacity) {
      this.buffer.push(event);
      return;
    }
    const last = this.buffer[this.buffer.length - 1];
    if (last !== undefined && (event.event === "llm_chunk" || event.event === "thinking_chunk") && last.event === event.event && last.step === event.step) {
      this.buffer[this.buffer.length - 1] = { ...last, delta: last.delta + event.delta };
      return;
    }
    this.dropped++;
  }

  /** The result arrived: buffered events are still delivered, then the iteration ends. */
  finish(result: ChatResult): void {
    if (this.outcome !== null) return;
    this.outcome = { kind: "ok", result };
    this.settle.resolve(result);
    this.wake();
  }

  /**
   * The turn failed. `discard`: events not yet taken are dropped, so nothing of the turn reaches
   * the host after the rejection (an abort); otherwise they are delivered first (an error frame).
   */
  fail(error: LocalAiError, discard: boolean): void {
    if (this.outcome !== null) return;
    this.outcome = { kind: "error", error };
    if (discard) this.buffer.length = 0;
    this.settle.reject(error);
    this.wake();
  }

  [Symbol.asyncIterator](): AsyncIterator<ChatEvent> {
    if (this.iterating) throw new Error(`chat turn ${this.id} can be iterated once`);
    this.iterating = true;
    return {
      next: () => {
        const event = this.buffer.shift();
        if (event !== undefined) return Promise.resolve({ value: event, done: false });
        if (this.outcome?.kind === "error") return Promise.reject(this.outcome.error);
        if (this.outcome !== null || this.detached) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
      },
      // Leaving the loop early stops delivery; the turn itself runs on (abort the signal to cancel it).
      return: () => {
        this.detached = true;
        this.buffer.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private wake(): void {
    if (this.waiter === null || this.outcome === null) return;
    const { resolve, reject } = this.waiter;
    this.waiter = null;
    if (this.outcome.kind === "error") reject(this.outcome.error);
    else resolve({ value: undefined, done: true });
  }
}
