// Child output handling: bytes -> lines (UTF-8 safe, each line bounded) -> a bounded tail kept
// for error messages and doctor. A chatty or broken child can never grow our memory.
import { StringDecoder } from "node:string_decoder";

export const DEFAULT_MAX_LINE_CHARS = 4096;

/** Splits a byte stream into lines; an over-long line is cut and marked, never buffered whole. */
export class LineSplitter {
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

/** The last `capacity` lines. */
export class LogTail {
  private readonly buffer: string[] = [];

  constructor(private readonly capacity = 200) {}

  push(line: string): void {
    this.buffer.push(line);
    if (this.buffer.length > this.capacity) this.buffer.splice(0, this.buffer.length - this.capacity);
  }

  lines(count = this.capacity): string[] {
    return this.buffer.slice(-count);
  }

  clear(): void {
    this.buffer.length = 0;
  }
}

/**
 * The lines worth quoting in an error: llama.cpp marks errors with " E " (timestamped format)
 * or "error"; fall back to the last lines when none are marked.
 */
export function errorExcerpt(lines: readonly string[], count = 6): string[] {
  const marked = lines.filter((line) => / E |error|failed|fatal|abort/i.test(line));
  return (marked.length > 0 ? marked : lines).slice(-count);
}
