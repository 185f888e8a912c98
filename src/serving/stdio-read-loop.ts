import type { Readable } from "node:stream";
import type { Logger } from "pino";
import { readLines, type LineItem } from "../shared/line-splitter.js";

export interface StdioReadLoopOptions {
  input: Readable;
  /** stdio.max_line_bytes: a longer line arrives as an `overflow` item, and reading goes on. */
  maxLineBytes: number;
  logger: Logger;
  /** True once the server stops: the lines read from then on are not handled. */
  stopping: () => boolean;
  /** Awaited before each line is read (ACP: until the connection takes a message and fewer than the limit are in flight). */
  admit?: () => Promise<void>;
  /** One line; the next is not read until it resolves (a handler that waits holds stdin: backpressure). */
  handle: (item: LineItem) => Promise<void>;
}

/**
 * The read side of every stdio server (v1, JSON-RPC, ACP): capped lines from stdin, one at a
 * time, to the dialect's message layer. Resolves with why reading ended (`stdin closed`,
 * `stdin error`), or null when the server was stopping already.
 */
export async function runStdioReadLoop(options: StdioReadLoopOptions): Promise<"stdin closed" | "stdin error" | null> {
  const lines = readLines(options.input, options.maxLineBytes)[Symbol.asyncIterator]();
  try {
    for (;;) {
      await options.admit?.();
      const next = await lines.next();
      if (next.done === true) return "stdin closed";
      if (options.stopping()) {
        await lines.return?.(undefined);
        return null;
      }
      await options.handle(next.value);
    }
  } catch (error) {
    options.logger.error({ err: error }, "reading stdin failed");
    // As a for-await loop would: the splitter lets go of stdin (a no-op when it threw itself).
    await lines.return?.(undefined).catch(() => undefined);
    return "stdin error";
  }
}
