import type { Logger } from "pino";
import { raceAbort } from "../../shared/abort.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { LoadProgress, WarmUpOptions } from "../engine.js";

/** What the load function gets: its own signal (never a caller's) and a progress fan-out. */
export interface LoadContext {
  signal: AbortSignal;
  onProgress: (progress: LoadProgress) => void;
  /** The logger of the caller that started the load (absent: the owner's). */
  logger?: Logger;
}

/**
 * One load shared by every concurrent waiter (a model load). The load has its own lifetime: its
 * AbortController is aborted only by `close()`, never by a waiter, so cancelling the chat that
 * happened to start the load cannot fail the others waiting on it. Each waiter races its own
 * signal and gives up alone (`cancelled`). A load that every waiter has left keeps going: the
 * model is very likely wanted again soon, and loading it twice would cost more than finishing.
 * A failed load is forgotten, so the next waiter retries.
 */
export class SharedLoad<T> {
  private pending: Promise<T> | null = null;
  private value: T | null = null;
  private controller: AbortController | null = null;
  private readonly listeners = new Set<(progress: LoadProgress) => void>();
  private closed = false;

  constructor(private readonly load: (context: LoadContext) => Promise<T>) {}

  /** The loaded value, if any. */
  get current(): T | null {
    return this.value;
  }

  get inProgress(): boolean {
    return this.pending !== null;
  }

  /** Starts the load if needed and waits for it on behalf of one caller. */
  async get(options: WarmUpOptions = {}): Promise<T> {
    if (this.closed) throw new RuntimeError("shutting_down", "The engine is closed");
    if (this.value !== null) return this.value;
    const pending = (this.pending ??= this.start(options.logger));
    const { signal, onProgress } = options;
    if (onProgress) this.listeners.add(onProgress);
    try {
      return await raceAbort(pending, signal);
    } catch (error) {
      if (signal?.aborted === true) throw new RuntimeError("cancelled", "Model load cancelled", { cause: error });
      throw error;
    } finally {
      if (onProgress) this.listeners.delete(onProgress);
    }
  }

  /** Aborts a load in progress and returns what was loaded (or null), for the owner to dispose. */
  async close(): Promise<T | null> {
    this.closed = true;
    this.controller?.abort(new RuntimeError("shutting_down", "The engine is closed"));
    const value = this.value ?? (await this.pending?.catch(() => null)) ?? null;
    this.value = null;
    this.pending = null;
    return value;
  }

  private start(logger: Logger | undefined): Promise<T> {
    const controller = new AbortController();
    this.controller = controller;
    const onProgress = (progress: LoadProgress): void => {
      for (const listener of this.listeners) listener(progress);
    };
    return this.load({ signal: controller.signal, onProgress, ...(logger ? { logger } : {}) }).then(
      (value) => {
        this.controller = null;
        this.pending = null;
        this.value = value;
        return value;
      },
      (error: unknown) => {
        this.controller = null;
        this.pending = null; // a failed load may be retried
        throw error;
      },
    );
  }
}
