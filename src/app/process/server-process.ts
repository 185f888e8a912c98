import type { Logger } from "pino";
import type { LogLevel } from "../../config/schema.js";
import { createLogger, flushLogger } from "../../logging/create-logger.js";
import { installProcessGuards } from "./process-guards.js";
import { shutdownOnSignals } from "./shutdown-signals.js";
import type { SignalLatch } from "./signal-latch.js";
import { onStdinEof } from "./stdin-lifeline.js";

/** What every long-running server command sets up before serving, and undoes at the end. */
export interface ServerProcess {
  logger: Logger;
  /** Aborted by SIGTERM / SIGINT (SIGBREAK on Windows) or the stdin lifeline: the server stops gracefully (a second signal exits at once). */
  signal: AbortSignal;
  /** Removes the signal handlers and guards, then flushes the log (the last step before exit). */
  finish(): Promise<void>;
  /** Resolves once the shutdown signal arrives. */
  stopRequested(): Promise<void>;
}

/** Logger on stderr, last-resort guards and signal handling: the same for every serve-* command. */
export function startServerProcess(options: {
  level?: LogLevel | undefined;
  env: Readonly<Record<string, string | undefined>>;
  signals?: SignalLatch | undefined;
  /** --exit-on-stdin-eof: the end of this stream stops the server as SIGTERM would. */
  lifeline?: (NodeJS.ReadableStream & { destroy?(): void }) | undefined;
}): ServerProcess {
  const logger = createLogger({ level: options.level, env: options.env });
  const exitNow = (code: number): void => {
    void flushLogger(logger, 500).then(() => process.exit(code));
  };
  const disposeGuards = installProcessGuards(logger, exitNow);
  const signals = shutdownOnSignals(logger, exitNow, options.signals);
  const disposeLifeline = options.lifeline === undefined ? () => undefined : onStdinEof(options.lifeline, () => signals.requestStop("stdin closed (--exit-on-stdin-eof)"));
  return {
    logger,
    signal: signals.signal,
    stopRequested: () =>
      new Promise<void>((resolve) => {
        if (signals.signal.aborted) resolve();
        else signals.signal.addEventListener("abort", () => resolve(), { once: true });
      }),
    finish: async () => {
      signals.dispose();
      disposeLifeline();
      disposeGuards();
      await flushLogger(logger);
    },
  };
}
