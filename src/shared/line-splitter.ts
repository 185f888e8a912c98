import type { Readable } from "node:stream";

export type LineItem =
  | { kind: "line"; text: string }
  /** A line longer than the cap: its bytes were discarded as they arrived, never buffered whole. */
  | { kind: "overflow"; bytes: number };

const NEWLINE = 0x0a;

/**
 * Shared by every line-based front door (stdio v1 and JSON-RPC, the Pod socket).
 * Splits a byte stream into lines of at most `maxLineBytes` (excluding the newline). Bytes are
 * kept as Buffers until a newline so a multi-byte UTF-8 character split across chunks survives.
 * CRLF is tolerated; blank lines are skipped.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;
  private discarded = 0;

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: Buffer): LineItem[] {
    const items: LineItem[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.append(chunk.subarray(start, end));
      if (newline === -1) break;
      this.finishLine(items);
      start = newline + 1;
    }
    return items;
  }

  /** At EOF a final line without a newline still counts. */
  end(): LineItem[] {
    const items: LineItem[] = [];
    if (this.size > 0 || this.discarding) this.finishLine(items);
    return items;
  }

  private append(segment: Buffer): void {
    if (segment.length === 0) return;
    if (this.discarding) {
      this.discarded += segment.length;
      return;
    }
    // A trailing CR is not content; allow one extra byte so a capped CRLF line is not an overflow.
    if (this.size + segment.length > this.maxLineBytes + 1) {
      this.discarding = true;
      this.discarded = this.size + segment.length;
      this.parts = [];
      this.size = 0;
      return;
    }
    // Copy: the caller's chunk buffer may be pooled and reused.
    this.parts.push(Buffer.from(segment));
    this.size += segment.length;
  }

  private finishLine(items: LineItem[]): void {
    if (this.discarding) {
      items.push({ kind: "overflow", bytes: this.discarded });
      this.discarding = false;
      this.discarded = 0;
      return;
    }
    let line = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    if (line.length > this.maxLineBytes) {
      items.push({ kind: "overflow", bytes: line.length });
      return;
    }
    const text = line.toString("utf8");
    if (text.trim() === "") return;
    items.push({ kind: "line", text });
  }
}

/** Lines from a readable stream; pulling (for await) gives natural backpressure on the source. */
export async function* readLines(input: Readable, maxLineBytes: number): AsyncGenerator<LineItem> {
  const splitter = new LineSplitter(maxLineBytes);
  for await (const chunk of input) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    yield* splitter.push(buffer);
  }
  yield* splitter.end();
}
