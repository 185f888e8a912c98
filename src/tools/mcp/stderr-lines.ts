import type { Readable } from "node:stream";
import type { Logger } from "../../logging/create-logger.js";
import { LogTail } from "../../shared/process/log-tail.js";
import { OutputLineSplitter } from "../../shared/process/output-lines.js";

const TAIL_LINES = 10;

/**
 * Drains a server's stderr into our log (debug, line by line), never to our stdout, which may
 * carry a protocol. The last lines are kept: when a server dies or fails to start, they usually
 * say why, so they go into the error the user sees. Lines are bounded (shared process toolkit).
 */
export class StderrTail {
  private readonly lines = new LogTail(TAIL_LINES);
  private readonly splitter: OutputLineSplitter;

  constructor(stream: Readable, private readonly logger: Logger) {
    this.splitter = new OutputLineSplitter((line) => this.emit(line));
    stream.on("data", (chunk: Buffer | string) => this.splitter.push(chunk));
    stream.on("end", () => this.splitter.end());
    // A broken pipe on a dying child is expected; it must not become an unhandled error.
    stream.on("error", (error) => this.logger.debug({ err: error }, "stderr stream error"));
  }

  /** The last lines, joined, for error messages; empty when the server said nothing. */
  tail(): string {
    const pending = this.splitter.pending().trim();
    return [...this.lines.lines(), ...(pending === "" ? [] : [pending])].slice(-TAIL_LINES).join("\n");
  }

  private emit(line: string): void {
    if (line.trim() === "") return;
    this.logger.debug({ stream: "stderr" }, line);
    this.lines.push(line);
  }
}
