/**
 * A stream that remembers whether its cursor is mid-line, so a status line never starts inside
 * streamed text. The terminal chat shares one writer when answers and status lines go to the same
 * stream, two when they go to stdout and stderr.
 */
export class LineWriter {
  private midLine = false;

  constructor(readonly stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }) {}

  get isTTY(): boolean {
    return this.stream.isTTY === true;
  }

  /** Columns to fit a line into; a pipe or a file gets a generous fixed width. */
  get width(): number {
    const columns = this.stream.columns;
    return typeof columns === "number" && columns >= 20 ? columns : 100;
  }

  get atLineStart(): boolean {
    return !this.midLine;
  }

  /** Writes text as it comes. `visible` is the text without escape codes, when they differ. */
  write(text: string, visible = text): void {
    if (text === "") return;
    this.stream.write(text);
    if (visible !== "") this.midLine = !visible.endsWith("\n");
  }

  endLine(): void {
    if (!this.midLine) return;
    this.stream.write("\n");
    this.midLine = false;
  }

  /** Erases the current line in place (a progress bar being redrawn); terminals only. */
  eraseLine(): void {
    this.stream.write("\r\x1b[2K");
    this.midLine = false;
  }

  /** A whole line of its own. */
  line(text: string): void {
    this.endLine();
    this.stream.write(`${text}\n`);
  }
}
