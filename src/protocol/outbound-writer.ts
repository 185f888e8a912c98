import type { Writable } from "node:stream";
import type { Logger } from "pino";
import { settlesWithin } from "../shared/abort.js";

export interface OutboundWriterOptions {
  /** Queue bound in messages. */
  maxMessages: number;
  /** Queue bound in bytes; a single larger result is still accepted into an empty queue. */
  maxBytes?: number;
  logger: Logger;
}

export interface WriterStats {
  enqueued: number;
  dropped: number;
  batches: number;
  bytesWritten: number;
  discarded: number;
  broken: boolean;
}

interface Waiter {
  line: string;
  resolve: () => void;
}

/**
 * Seed 000 "Output buffering": a bounded FIFO drained by one writer task with one `write` per
 * drained batch. Events are best-effort (dropped when full); results and errors wait for room.
 * After a write error (EPIPE, closed stdout) output is discarded and the server keeps going.
 * Protocol-agnostic: it moves complete lines, so v1 and JSON-RPC share it.
 */
export class OutboundWriter {
  private queue: string[] = [];
  private queueBytes = 0;
  private waiters: Waiter[] = [];
  private wake: (() => void) | null = null;
  private pendingWrites = 0;
  private idleResolvers: Array<() => void> = [];
  private closed = false;
  private draining = false;
  private readonly maxBytes: number;
  private readonly task: Promise<void>;
  readonly stats: WriterStats = { enqueued: 0, dropped: 0, batches: 0, bytesWritten: 0, discarded: 0, broken: false };

  constructor(
    private readonly out: Writable,
    private readonly options: OutboundWriterOptions,
  ) {
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    // A persistent listener: without one an async EPIPE would crash the process.
    out.on("error", this.onStreamError);
    this.task = this.run();
  }

  /** Best-effort (events). Returns false when the line was dropped because the queue is full. */
  offer(line: string): boolean {
    if (this.stats.broken || this.closed) {
      this.stats.discarded++;
      return false;
    }
    if (!this.hasRoom(line)) {
      this.stats.dropped++;
      this.options.logger.debug({ dropped: this.stats.dropped, queued: this.queue.length }, "STDIO_WRITER_DROP");
      return false;
    }
    this.enqueue(line);
    return true;
  }

  /** Never dropped (results, errors): resolves once the line is queued, waiting for room if needed. */
  push(line: string): Promise<void> {
    if (this.stats.broken) {
      this.stats.discarded++;
      return Promise.resolve();
    }
    if (this.waiters.length === 0 && this.hasRoom(line)) {
      this.enqueue(line);
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push({ line, resolve }));
  }

  /** Lines wait for the reader: queued, or the stream's buffer is full and we wait for `drain`. */
  get busy(): boolean {
    return this.queue.length > 0 || this.draining;
  }

  /** Resolves true when everything queued so far reached the OS, false on timeout. */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.isIdle()) return true;
    const idle = new Promise<void>((resolve) => this.idleResolvers.push(resolve));
    return settlesWithin(idle, timeoutMs);
  }

  /** Stops the writer task after the queue drains (bounded by the caller's flush). */
  async close(timeoutMs: number): Promise<boolean> {
    const flushed = await this.flush(timeoutMs);
    this.closed = true;
    this.signal();
    await settlesWithin(this.task, 100);
    this.out.off("error", this.onStreamError);
    // Keep swallowing late EPIPEs from writes still in the stream's buffer.
    this.out.on("error", () => undefined);
    return flushed;
  }

  private hasRoom(line: string): boolean {
    if (this.queue.length === 0) return true;
    return this.queue.length < this.options.maxMessages && this.queueBytes + line.length <= this.maxBytes;
  }

  private enqueue(line: string): void {
    this.queue.push(line);
    this.queueBytes += line.length;
    this.stats.enqueued++;
    this.signal();
  }

  private admitWaiters(): void {
    while (this.waiters.length > 0) {
      const next = this.waiters[0] as Waiter;
      if (!this.stats.broken && !this.hasRoom(next.line)) return;
      this.waiters.shift();
      if (this.stats.broken) this.stats.discarded++;
      else this.enqueue(next.line);
      next.resolve();
    }
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async run(): Promise<void> {
    for (;;) {
      if (this.queue.length === 0) {
        this.notifyIdle();
        if (this.closed) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      const batch = this.queue;
      this.queue = [];
      this.queueBytes = 0;
      this.admitWaiters();
      if (this.stats.broken) {
        this.stats.discarded += batch.length;
        continue;
      }
      await this.writeBatch(batch.join(""));
    }
  }

  private async writeBatch(text: string): Promise<void> {
    this.stats.batches++;
    this.pendingWrites++;
    let ready: boolean;
    try {
      ready = this.out.write(text, (error) => {
        this.pendingWrites--;
        if (error) this.markBroken(error);
        else this.stats.bytesWritten += Buffer.byteLength(text);
        this.notifyIdle();
      });
    } catch (error) {
      this.pendingWrites--;
      this.markBroken(error);
      return;
    }
    if (!ready && !this.stats.broken) {
      this.draining = true;
      await this.waitForDrain();
      this.draining = false;
    }
  }

  private waitForDrain(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.out.off("drain", done);
        this.out.off("close", done);
        this.out.off("error", done);
        resolve();
      };
      this.out.on("drain", done);
      this.out.on("close", done);
      this.out.on("error", done);
    });
  }

  private readonly onStreamError = (error: Error): void => this.markBroken(error);

  private markBroken(error: unknown): void {
    if (this.stats.broken) return;
    this.stats.broken = true;
    // Logged once; from here on output is discarded and the server keeps serving.
    this.options.logger.error({ err: error }, "ERROR_STACKTRACE: output stream failed; discarding further output");
    this.stats.discarded += this.queue.length;
    this.queue = [];
    this.queueBytes = 0;
    this.admitWaiters();
    this.notifyIdle();
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.waiters.length === 0 && (this.pendingWrites === 0 || this.stats.broken);
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const resolvers = this.idleResolvers;
    this.idleResolvers = [];
    for (const resolve of resolvers) resolve();
  }
}
