import type { Writable } from "node:stream";
import type { Logger } from "pino";
import type { LineOutput } from "../serving/line-output.js";
import { settlesWithin } from "../shared/abort.js";

/**
 * Whole lines to a Writable (stdout), in order, with backpressure: a write waits for `drain` when
 * the stream's buffer is full, so a reader that stops reading stops the ACP connection's writes
 * (and, through it, the turn's updates) instead of memory growing. After a write error (EPIPE:
 * the editor is gone) output is discarded and the server keeps going until stdin ends.
 */
export class LineSink implements LineOutput {
  private chain: Promise<void> = Promise.resolve();
  private broken = false;
  /** Lines queued and not yet handed to the stream. */
  pending = 0;

  constructor(
    private readonly out: Writable,
    private readonly logger: Logger,
  ) {
    // A persistent listener: without one an async EPIPE would crash the process.
    out.on("error", this.onError);
  }

  push(line: string): Promise<void> {
    if (this.broken) return Promise.resolve();
    this.pending++;
    const written = this.chain.then(() => this.writeNow(line)).finally(() => this.pending--);
    this.chain = written.catch(() => undefined);
    return written;
  }

  /** Resolves true when everything queued was written within `ms`; the sink then lets go of the stream. */
  async close(ms: number): Promise<boolean> {
    const flushed = await settlesWithin(this.chain, ms);
    this.out.off("error", this.onError);
    return flushed;
  }

  private writeNow(line: string): Promise<void> {
    if (this.broken) return Promise.resolve();
    return new Promise((resolve) => {
      const onDrain = (): void => {
        this.out.off("close", onDrain);
        resolve();
      };
      if (this.out.write(line)) {
        resolve();
        return;
      }
      // `close` too: a stream destroyed while full never drains.
      this.out.once("drain", onDrain);
      this.out.once("close", onDrain);
    });
  }

  private readonly onError = (error: Error): void => {
    if (this.broken) return;
    this.broken = true;
    this.logger.warn({ err: error }, "stdout write failed; output is discarded from now on");
  };
}
