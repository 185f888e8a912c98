import type { ProcessIo } from "./cli-deps.js";

/** How long a finished download command waits for open connections to close before exiting anyway. */
const EXIT_GRACE_MS = 2000;

/**
 * A connection the downloader could not abort (a server that never answered) must not keep a
 * finished command alive: once its result is out, the process exits within a moment whatever is
 * left open. The timer is unref'd, so a process with nothing left exits at once as usual.
 */
export function exitSoonAfter(io: ProcessIo): void {
  setTimeout(() => io.exit(), EXIT_GRACE_MS).unref();
}
