import type { Readable } from "node:stream";
import type { Logger } from "../../logging/create-logger.js";

const MAX_LINE_CHARS = 4096;
const TAIL_LINES = 10;

/**
 * Drains a server's stderr into our log (debug, line by line), never to our stdout, which may
 * carry a protocol. The last lines are kept: when a server dies or fails to start, they usually
 * say why, so they go into the error the user sees.
 */
export class StderrTail {
  private readonly lines: string[] = [];
  private partial = "";

  constructor(stream: Readable, private readonly logger: Logger) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => this.push(chunk));
    stream.on("end", () => this.flush());
    // A broken pipe on a dying child is expected; it must not become an unhandled error.
    stream.on("error", (error) => this.logger.debug({ err: error }, "stderr stream error"));
  }

  /** The last lines, joined, for error messages; empty when the server said nothing. */
  tail(): string {
    const pending = this.partial.trim();
    return [...this.lines, ...(pending === "" ? [] : [pending])].slice(-TAIL_LINES).join("\n");
  }

  private push(chunk: string): void {
    const pieces = (this.partial + chunk).split(/\r?\n/);
    this.partial = (pieces.pop() ?? "").slice(-MAX_LINE_CHARS);
    for (const piece of pieces) this.emit(piece);
  }

  private flush(): void {
    if (this.partial !== "") this.emit(this.partial);
    this.partial = "";
  }

  private emit(raw: string): void {
    const line = raw.length > MAX_LINE_CHARS ? `${raw.slice(0, MAX_LINE_CHARS)}…` : raw;
    if (line.trim() === "") return;
    this.logger.debug({ stream: "stderr" }, line);
    this.lines.push(line);
    if (this.lines.length > TAIL_LINES) this.lines.shift();
  }
}
