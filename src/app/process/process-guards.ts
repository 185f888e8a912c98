import type { Logger } from "pino";

/**
 * Last-resort handlers. A stray rejection is logged and the server keeps serving; an uncaught
 * exception leaves state unknown, so it is logged and the process exits non-zero.
 */
export function installProcessGuards(logger: Logger, exit: (code: number) => void): () => void {
  const onRejection = (reason: unknown): void => {
    logger.error({ err: reason }, "unhandled promise rejection");
  };
  const onException = (error: Error): void => {
    logger.fatal({ err: error }, "uncaught exception; exiting");
    exit(1);
  };
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  return () => {
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onException);
  };
}
