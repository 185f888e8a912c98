import { KEEP_ALIVE_FRAME } from "./sse-frames.js";

export interface FrameStreamOptions {
  keepAliveMs: number;
  /**
   * What is sent after `keepAliveMs` of silence (default: an SSE comment; the Messages API sends a
   * `ping` event, the Responses API `response.in_progress`, made when it is sent).
   */
  keepAliveFrame?: string | (() => string);
  /** Frames queued but not yet taken by the socket; beyond this the client is too slow. */
  maxPendingBytes: number;
  /** The client went away (socket closed) or fell too far behind: cancel the turn. */
  onCancel: (reason: string) => void;
}

/**
 * A pull-based SSE body. The turn emits synchronously, so frames queue here; the socket pulls
 * them only as fast as it drains (@hono/node-server waits for 'drain'), which is the
 * backpressure. A client that never reads cannot grow memory without bound: past
 * `maxPendingBytes` the turn is cancelled. A keep-alive comment goes out after `keepAliveMs`
 * without output so proxies and clients do not time out during long tool calls.
 */
export class FrameStream {
  readonly body: ReadableStream<Uint8Array>;
  /** Frames not yet pulled, as text: encoded once per pull, not once per frame. */
  private queue: string[] = [];
  private pendingBytes = 0;
  private waiting: (() => void) | null = null;
  private ended = false;
  private cancelled = false;
  private keepAlive: NodeJS.Timeout | undefined;
  /** When the last frame was queued (ms, performance.now()): the keep-alive timer checks it when it fires. */
  private lastOutputAt = performance.now();
  private readonly encoder = new TextEncoder();

  constructor(private readonly options: FrameStreamOptions) {
    this.body = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          while (this.queue.length === 0 && !this.ended) await new Promise<void>((resolve) => (this.waiting = resolve));
          if (this.queue.length === 0) {
            this.stopKeepAlive();
            controller.close();
            return;
          }
          // Everything queued since the last pull goes out as one chunk: one socket write.
          const frames = this.queue;
          this.queue = [];
          const next = this.encoder.encode(frames.length === 1 ? frames[0] : frames.join(""));
          this.pendingBytes -= next.byteLength;
          controller.enqueue(next);
        },
        cancel: () => this.cancel("client disconnected"),
      },
      { highWaterMark: 0 },
    );
    this.armKeepAlive();
  }

  /** Frames are queued that the client has not pulled yet. */
  get backlogged(): boolean {
    return this.queue.length > 0;
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  push(frame: string): void {
    if (this.ended || this.cancelled) return;
    this.queue.push(frame);
    this.pendingBytes += Buffer.byteLength(frame);
    this.lastOutputAt = performance.now();
    this.wake();
    if (this.pendingBytes > this.options.maxPendingBytes) this.cancel(`client is not reading (${this.pendingBytes} bytes pending)`);
  }

  /** No more frames after the queued ones; the body closes once they are taken. */
  end(): void {
    this.ended = true;
    this.stopKeepAlive();
    this.wake();
  }

  cancel(reason: string): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.queue = [];
    this.pendingBytes = 0;
    this.end();
    this.options.onCancel(reason);
  }

  private wake(): void {
    const resolve = this.waiting;
    this.waiting = null;
    resolve?.();
  }

  /**
   * One timer for the stream's life, not one re-armed per frame (frames come per token burst):
   * when it fires it sends a keep-alive only if nothing was queued for `keepAliveMs`, and else
   * waits out the rest of that time.
   */
  private armKeepAlive(delayMs = this.options.keepAliveMs): void {
    if (this.ended) return;
    this.keepAlive = setTimeout(this.onKeepAlive, delayMs);
    // A keep-alive must never hold the process open on its own.
    this.keepAlive.unref();
  }

  private readonly onKeepAlive = (): void => {
    this.keepAlive = undefined;
    const quietMs = performance.now() - this.lastOutputAt;
    if (quietMs >= this.options.keepAliveMs) {
      const frame = this.options.keepAliveFrame ?? KEEP_ALIVE_FRAME;
      this.push(typeof frame === "string" ? frame : frame());
      this.armKeepAlive();
    } else {
      this.armKeepAlive(this.options.keepAliveMs - quietMs);
    }
  };

  private stopKeepAlive(): void {
    clearTimeout(this.keepAlive);
    this.keepAlive = undefined;
  }
}
