import type { Logger } from "pino";
import { stopSignals, type SignalLatch } from "./signal-latch.js";

/**
 * SIGTERM/SIGINT abort the returned signal once: the server then shuts down gracefully. A second
 * signal means the user is impatient: exit at once. On Windows SIGBREAK (Ctrl+Break, and what a
 * console host sends to ask a program to close) counts as SIGTERM. `requestStop` is the same
 * graceful stop for other causes (the stdin lifeline); it never forces an exit.
 */
export function shutdownOnSignals(
  logger: Logger,
  exit: (code: number) => void,
  latch?: SignalLatch,
  os: NodeJS.Platform = process.platform,
): { signal: AbortSignal; requestStop(reason: string): void; dispose(): void } {
  const names = stopSignals(os);
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      logger.warn({ signal: name }, "second signal; exiting now");
      exit(1);
      return;
    }
    logger.info({ signal: name }, "signal received; shutting down");
    controller.abort(`${name} received`);
  };
  for (const name of names) process.on(name, onSignal);
  // Installed before the latch lets go, so no signal falls between the two.
  const held = latch?.release();
  if (held !== undefined) onSignal(held);
  return {
    signal: controller.signal,
    requestStop: (reason) => {
      if (controller.signal.aborted) return;
      logger.info({ reason }, "stop requested; shutting down");
      controller.abort(reason);
    },
    dispose: () => {
      for (const name of names) process.off(name, onSignal);
    },
  };
}
