import { createWriteStream } from "node:fs";
import type { Writable } from "node:stream";

/** What protocolOutput needs of process.stdout. */
export interface StdoutLike {
  fd?: number;
  isTTY?: boolean;
}

/**
 * The stream protocol lines are written to. On Windows node makes stdout pipes synchronous: a slow
 * host would then stall our event loop on every write, and the bounded writer would never see
 * backpressure (so never drop an event, as seed 000 requires, but freeze instead). There the fd
 * is written through an fs stream (writes run on libuv's thread pool, as pino's sonic-boom does
 * for stderr), which reports backpressure through `write()`'s return value and `drain`. A TTY
 * keeps process.stdout (the console needs its own handling); POSIX pipes are asynchronous already.
 */
export function protocolOutput<T extends Writable & StdoutLike>(stdout: T, os: NodeJS.Platform): Writable {
  if (os !== "win32" || stdout.isTTY === true || stdout.fd === undefined) return stdout;
  return createWriteStream("", { fd: stdout.fd, autoClose: false, highWaterMark: 64 * 1024 });
}
