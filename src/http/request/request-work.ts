import type { Logger } from "pino";
import type { InFlightWork } from "./in-flight-work.js";
import { requestAbort } from "./request-abort.js";

export interface RequestWork {
  /** Aborted when the client goes away or the server shuts down: the turn or generation stops. */
  controller: AbortController;
  /** Once the work is over (answered, streamed to the end, failed): listeners off, in-flight count down, `onDone`. Idempotent. */
  finish: () => void;
}

/**
 * The wiring every dialect's turn or generation needs: one abort for client and shutdown, counted
 * as in-flight work (graceful shutdown waits for it), and what the request holds (a session gate)
 * released with it. Work that was aborted logs when it has really stopped (`logger`, info), with
 * how long that took: the time a client that went away still cost (a long prompt stops within a
 * chunk of its reading).
 */
export function startRequestWork(options: { requestSignal: AbortSignal; shutdownSignal?: AbortSignal | undefined; inFlight: InFlightWork; onDone?: () => void; logger?: Logger }): RequestWork {
  const abort = requestAbort(options.requestSignal, options.shutdownSignal);
  const leave = options.inFlight.enter();
  const { signal } = abort.controller;
  let abortedAt = signal.aborted ? performance.now() : null;
  signal.addEventListener("abort", () => (abortedAt = performance.now()), { once: true });
  let finished = false;
  return {
    controller: abort.controller,
    finish: () => {
      if (finished) return;
      finished = true;
      abort.dispose();
      leave();
      options.onDone?.();
      if (abortedAt !== null) options.logger?.info({ reason: String(signal.reason), stopped_ms: Math.round(performance.now() - abortedAt) }, "cancelled work stopped");
    },
  };
}
