// A child's output as lines: bytes -> lines (UTF-8 safe, each line bounded). A chatty or broken
// child can never grow our memory. (Protocol input uses shared/line-splitter.ts, which discards
// an over-long line instead: a cut request must not run, a cut log line is still worth reading.)
import { StringDecoder } from "node:string_decoder";

export const DEFAULT_MAX_LINE_CHARS = 4096;

/** Splits a byte stream into lines; an over-long line is cut and marked, never buffered whole. */
export class OutputLineSplitter {
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";
  private truncated = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineChars = DEFAULT_MAX_LINE_CHARS,
  ) {}

  push(chunk: Buffer | string): void {
    const text = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    let start = 0;
    for (;;) {
      const newline = text.indexOf("\n", start);
      if (newline === -1) break;
      this.append(text.slice(start, newline));
      this.emit();
      start = newline + 1;
    }
    this.append(text.slice(start));
  }

  /** The line being received (no newline yet), for a tail read while the child is still talking. */
  pending(): string {
    return this.partial;
  }

  /** Flushes a last line without a newline. */
  end(): void {
    this.append(this.decoder.end());
    if (this.partial !== "" || this.truncated) this.emit();
  }

  private append(text: string): void {
    if (text === "") return;
    const room = this.maxLineChars - this.partial.length;
    if (text.length > room) {
      this.partial += text.slice(0, Math.max(0, room));
      this.truncated = true;
    } else {
      this.partial += text;
    }
  }

  private emit(): void {
    const line = this.partial.endsWith("\r") ? this.partial.slice(0, -1) : this.partial;
    this.onLine(this.truncated ? `${line} [truncated]` : line);
    this.partial = "";
    this.truncated = false;
  }
}
