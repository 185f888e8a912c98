import type { AgentEvent, EmitEvent } from "./events.js";

type DeltaEvent = Extract<AgentEvent, { event: "llm_chunk" | "thinking_chunk" }>;

/** Schedules `fn` after `ms`; returns what cancels it. Injected so tests can drive the clock. */
export type ScheduleTimer = (fn: () => void, ms: number) => () => void;

/** A real timer that never keeps the process alive: the turn itself holds the event loop open. */
export const unrefTimer: ScheduleTimer = (fn, ms) => {
  const handle = setTimeout(fn, ms);
  handle.unref();
  return () => clearTimeout(handle);
};

export interface CoalesceOptions {
  /** The merge window in ms; 0 turns merging off. */
  windowMs: number;
  /**
   * True while the front door's output is backed up (a reader slower than the tokens): pending
   * text then stays pending past the window, so a slow reader gets fewer, larger events instead
   * of a queue of small ones that would be dropped when it fills.
   */
  busy?: () => boolean;
  schedule?: ScheduleTimer;
}

/**
 * Merges text deltas so a front door sends a line (or an SSE frame, or a socket message) per
 * burst of tokens instead of per token: at sub-millisecond tokens the per-line cost on both ends
 * (serialising, writing, the reader's wake-ups) is a visible share of the token time, and hosts
 * render text, not tokens (a UI frame is 16 ms).
 *
 * A leading-edge throttle per kind and step: a delta that finds no window open (the first of a
 * step, or the first after a quiet spell) leaves at once and opens a window of `windowMs`; deltas
 * inside the window are concatenated and leave as one event when it elapses (which opens the next
 * window, or waits for another one while `busy()`). Any other event, a switch between `llm_chunk` and `thinking_chunk`, or a new step
 * flushes the pending text first, so the order of events is exactly the unmerged order and the
 * concatenated text is unchanged. `close()` flushes and clears the timer; after it every event
 * passes straight through.
 */
export class DeltaCoalescer {
  private pending: DeltaEvent | null = null;
  /** Kind and step of the open window, or null when no window is open. */
  private window: { event: DeltaEvent["event"]; step: number } | null = null;
  private cancelTimer: (() => void) | null = null;
  private closed = false;
  /** A sink failure inside the timer: rethrown to the turn at its next emit (or close) instead of crashing the process. */
  private failure: { error: unknown } | null = null;

  private readonly windowMs: number;
  private readonly schedule: ScheduleTimer;
  private readonly busy: () => boolean;

  constructor(
    private readonly sink: EmitEvent,
    options: CoalesceOptions,
  ) {
    this.windowMs = options.windowMs;
    this.schedule = options.schedule ?? unrefTimer;
    this.busy = options.busy ?? ((): boolean => false);
  }

  readonly emit: EmitEvent = (event) => {
    this.rethrow();
    if (this.closed || this.windowMs <= 0) {
      this.sink(event);
      return;
    }
    if (event.event !== "llm_chunk" && event.event !== "thinking_chunk") {
      this.endWindow();
      this.sink(event);
      return;
    }
    const window = this.window;
    if (window !== null && window.event === event.event && window.step === event.step) {
      if (this.pending === null) this.pending = { event: event.event, step: event.step, delta: event.delta };
      else this.pending.delta += event.delta;
      return;
    }
    // No window, or one of the other kind or step: what is pending goes first, this leaves now.
    this.endWindow();
    this.sink(event);
    this.openWindow(event);
  };

  /** Sends the pending text now (the window stays as it is). */
  flush(): void {
    const pending = this.pending;
    if (pending === null) return;
    this.pending = null;
    this.sink(pending);
  }

  /** The turn is over (finished, failed or cancelled): pending text leaves, the timer is cleared. */
  close(): void {
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.window = null;
    this.rethrow();
    this.flush();
  }

  private rethrow(): void {
    const failure = this.failure;
    if (failure === null) return;
    this.failure = null;
    throw failure.error;
  }

  private openWindow(event: DeltaEvent): void {
    this.window = { event: event.event, step: event.step };
    this.cancelTimer = this.schedule(this.onWindowElapsed, this.windowMs);
  }

  private endWindow(): void {
    this.flush();
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.window = null;
  }

  private readonly onWindowElapsed = (): void => {
    this.cancelTimer = null;
    const pending = this.pending;
    if (pending === null) {
      // A quiet window: the next delta is sent at once again.
      this.window = null;
      return;
    }
    // Tokens are still coming: keep merging for another window (and hold the text while the
    // output is backed up: it would only queue behind what the reader has not taken yet).
    try {
      if (!this.busy()) this.flush();
    } catch (error) {
      this.failure = { error };
      this.window = null;
      return;
    }
    this.cancelTimer = this.schedule(this.onWindowElapsed, this.windowMs);
  };
}

/**
 * Runs a turn with its `emit` coalesced (`windowMs` 0: unchanged). Whatever way the turn ends,
 * pending text is sent before this settles, so it precedes the turn's result or error frame; on
 * cancel that means the text generated before the abort is delivered, then the `cancelled`
 * error, and nothing after it.
 */
export async function withCoalescedEmit<T>(emit: EmitEvent, options: CoalesceOptions, run: (emit: EmitEvent) => Promise<T>): Promise<T> {
  if (options.windowMs <= 0) return run(emit);
  const coalescer = new DeltaCoalescer(emit, options);
  let result: T;
  try {
    result = await run(coalescer.emit);
  } catch (error) {
    try {
      coalescer.close();
    } catch {
      // The turn's own error is the one to report; a failed flush of its text is secondary.
    }
    throw error;
  }
  coalescer.close();
  return result;
}
