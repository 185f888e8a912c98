export type PodLine = { kind: "line"; text: string } | { kind: "overflow"; bytes: number };

/**
 * Splits one client's bytes into lines of at most `maxLineBytes`. An over-long line is discarded
 * as it streams (never buffered whole) and reported once; reading goes on with the next line.
 * Bytes stay Buffers until a newline so a UTF-8 character split across chunks survives.
 */
export class PodLineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private discarded = -1;

  constructor(private readonly maxLineBytes: number) {}

  push(chunk: Buffer): PodLine[] {
    const lines: PodLine[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      this.append(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return lines;
      this.finish(lines);
      start = newline + 1;
    }
  }

  private append(segment: Buffer): void {
    if (segment.length === 0) return;
    if (this.discarded >= 0) {
      this.discarded += segment.length;
      return;
    }
    // +1: a trailing CR is not content.
    if (this.size + segment.length > this.maxLineBytes + 1) {
      this.discarded = this.size + segment.length;
      this.parts = [];
      this.size = 0;
      return;
    }
    // Copied: the socket's chunk buffer may be reused.
    this.parts.push(Buffer.from(segment));
    this.size += segment.length;
  }

  private finish(lines: PodLine[]): void {
    if (this.discarded >= 0) {
      lines.push({ kind: "overflow", bytes: this.discarded });
      this.discarded = -1;
      return;
    }
    let text = Buffer.concat(this.parts, this.size).toString("utf8");
    this.parts = [];
    this.size = 0;
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.trim() !== "") lines.push({ kind: "line", text });
  }
}
