import type { Socket } from "node:net";
import type { Logger } from "pino";
import { LineSplitter, type LineItem as PodLine } from "../shared/line-splitter.js";

const FLUSH_AT_LINES = 256;

export interface ClientLimits {
  /** Queued lines per client; droppable events beyond it are dropped (counted). */
  queueLines: number;
  /** Queued bytes per client beyond which the client is disconnected (kept events pile up only for a stalled client). */
  maxQueueBytes: number;
  /** A client whose socket accepts nothing for this long while we have output for it is disconnected. */
  stallMs: number;
  maxLineBytes: number;
}

export interface ClientStats {
  sent: number;
  dropped: number;
}

/**
 * One connected listener: a bounded outbound queue drained by writes that wait for `drain`, and
 * capped inbound lines. It never blocks the pod: `send` only queues. A client that stops reading
 * loses droppable events, then is disconnected once stalled past `stallMs`.
 */
export class PodClientConnection {
  readonly stats: ClientStats = { sent: 0, dropped: 0 };
  private queue: string[] = [];
  private queueBytes = 0;
  private writing = false;
  private stallTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly splitter: LineSplitter;
  private readonly log: Logger;

  constructor(
    readonly id: number,
    private readonly socket: Socket,
    private readonly limits: ClientLimits,
    logger: Logger,
    onLine: (line: PodLine) => void,
    onClose: () => void,
  ) {
    this.log = logger.child({ client: id });
    this.splitter = new LineSplitter(limits.maxLineBytes);
    socket.on("data", (chunk: Buffer) => {
      for (const line of this.splitter.push(chunk)) onLine(line);
    });
    // A client that goes away (EPIPE, ECONNRESET) is simply no longer a listener.
    socket.on("error", (error) => this.log.debug({ err: error }, "client socket error"));
    socket.on("close", () => {
      this.closed = true;
      this.clearStall();
      if (this.stats.dropped > 0) this.log.info({ dropped: this.stats.dropped, sent: this.stats.sent }, "client gone; events were dropped for it");
      onClose();
    });
    // Any drain is progress: the stall clock starts over.
    socket.on("drain", () => {
      this.clearStall();
      this.flush();
    });
  }

  /** Queues one encoded event line; returns false when it was dropped. */
  send(line: string, droppable: boolean): boolean {
    if (this.closed) return false;
    if (droppable && this.queue.length >= this.limits.queueLines) {
      if (this.stats.dropped++ === 0) this.log.warn({ queued: this.queue.length }, "client is not keeping up; dropping its deltas");
      return false;
    }
    this.queue.push(line);
    this.queueBytes += line.length;
    if (this.queueBytes > this.limits.maxQueueBytes) {
      this.disconnect(`its queue passed ${this.limits.maxQueueBytes} bytes`);
      return false;
    }
    // Batched: events of one synchronous burst go out in one write; a long burst (an engine
    // parsing a big network read) is written as it grows, so the kernel buffer takes its share.
    if (this.queue.length >= FLUSH_AT_LINES) this.flush();
    else if (!this.writing) {
      this.writing = true;
      setImmediate(() => this.flush());
    }
    return true;
  }

  /** Ends the connection after the queued lines, bounded by `ms`. */
  async close(ms: number): Promise<void> {
    if (this.closed) return;
    const done = new Promise<void>((resolve) => this.socket.once("close", () => resolve()));
    this.flush();
    this.socket.end();
    const timer = setTimeout(() => this.socket.destroy(), ms);
    await done;
    clearTimeout(timer);
  }

  disconnect(why: string): void {
    if (this.closed) return;
    this.log.warn({ dropped: this.stats.dropped, queued: this.queue.length }, `disconnecting client: ${why}`);
    this.socket.destroy();
  }

  private flush(): void {
    this.writing = false;
    if (this.closed || this.queue.length === 0) {
      if (this.queue.length === 0) this.clearStall();
      return;
    }
    if (this.socket.writableNeedDrain) {
      this.armStall();
      return;
    }
    const batch = this.queue.join("");
    this.stats.sent += this.queue.length;
    this.queue = [];
    this.queueBytes = 0;
    if (this.socket.write(batch)) this.clearStall();
    else this.armStall();
  }

  private armStall(): void {
    this.stallTimer ??= setTimeout(() => this.disconnect(`it read nothing for ${this.limits.stallMs} ms`), this.limits.stallMs);
  }

  private clearStall(): void {
    if (this.stallTimer !== null) clearTimeout(this.stallTimer);
    this.stallTimer = null;
  }
}
