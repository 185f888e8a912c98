/** One SSE block as it arrived: its `event:` name, its `data:` text, or a comment (`: keep-alive`). */
export interface TimedFrame {
  event: string | null;
  data: string;
  /** A comment-only block (no data). */
  comment: boolean;
  /** When it was read (performance.now(), ms). */
  at: number;
}

/**
 * Reads a streamed response's SSE blocks as they arrive, each with its arrival time, so that a
 * test can wait for a given frame (mid-prompt, a heartbeat) and act then (abort the request).
 */
export class LiveSse {
  readonly frames: TimedFrame[] = [];
  /** Settles when the body ends (resolves) or breaks off (rejects: an abort, a cut connection). */
  readonly ended: Promise<void>;
  private readonly listeners = new Set<() => void>();

  constructor(response: Response) {
    const body = response.body;
    if (body === null) throw new Error("the response has no body");
    this.ended = this.read(body.getReader());
    // A waiter learns of the end through its own check; an abort is expected by the caller.
    this.ended.catch(() => undefined);
  }

  /** The first frame (already read or still to come) that `matches`; rejects at the end of the body or after `timeoutMs`. */
  waitFor(matches: (frame: TimedFrame) => boolean, timeoutMs: number): Promise<TimedFrame> {
    return new Promise((resolve, reject) => {
      let checked = 0;
      const stop = (): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      const check = (): void => {
        for (; checked < this.frames.length; checked++) {
          const frame = this.frames[checked]!;
          if (matches(frame)) {
            stop();
            resolve(frame);
            return;
          }
        }
      };
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`no matching SSE frame within ${timeoutMs} ms; got ${this.frames.length}: ${JSON.stringify(this.frames.slice(-3))}`));
      }, timeoutMs);
      this.listeners.add(check);
      check();
      void this.ended.then(
        () => {
          if (!this.listeners.has(check)) return;
          stop();
          reject(new Error(`the stream ended without a matching frame; got ${this.frames.length}: ${JSON.stringify(this.frames.slice(-3))}`));
        },
        (error: unknown) => {
          if (!this.listeners.has(check)) return;
          stop();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }

  /** The frames' parsed data (comments skipped). */
  events(): Array<{ event: string | null; data: Record<string, unknown>; at: number }> {
    return this.frames.filter((frame) => !frame.comment && frame.data !== "[DONE]").map((frame) => ({ event: frame.event, data: JSON.parse(frame.data) as Record<string, unknown>, at: frame.at }));
  }

  private async read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      const at = performance.now();
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const lines = block.split("\n");
        const data = lines.filter((line) => line.startsWith("data: ")).map((line) => line.slice(6));
        this.frames.push({ event: lines.find((line) => line.startsWith("event: "))?.slice(7) ?? null, data: data.join("\n"), comment: data.length === 0, at });
      }
      for (const listener of [...this.listeners]) listener();
    }
  }
}
