import type { Logger } from "pino";
import type { SignalLatch } from "./signal-latch.js";

/**
 * SIGTERM/SIGINT abort the returned signal once: the server then shuts down gracefully. A second
 * signal means the user is impatient: exit at once.
 */
export function shutdownOnSignals(logger: Logger, exit: (code: number) => void, latch?: SignalLatch): { signal: AbortSignal; dispose(): void } {
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
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // Installed before the latch lets go, so no signal falls between the two.
  const held = latch?.release();
  if (held !== undefined) onSignal(held);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    },
  };
}
