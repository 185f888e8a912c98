import type { Logger } from "pino";
import { settlesWithin } from "../shared/abort.js";
import type { LineOutput } from "./line-output.js";

/** How long cancelled work gets to answer `cancelled` after the grace period. */
const AFTER_ABORT_MS = 1000;

/** The requests a stdio server has in flight, as its shutdown sees them. */
export interface InFlightWork {
  /** Resolves once nothing is in flight. */
  settled(): Promise<void>;
  /** Cancels everything still running (it then answers `cancelled`). */
  abortAll(reason: string): void;
  /** Fields for the log line that names what was cancelled. */
  describe(): Record<string, unknown>;
}

/**
 * The first steps of every stdio server's shutdown (v1, JSON-RPC, ACP), once nothing new is read:
 * requests in flight get `graceMs` to answer; then what still runs is aborted and gets a short
 * while to settle. Resolves true when everything finished within the grace period.
 */
export async function settleInFlight(work: InFlightWork, graceMs: number, logger: Logger, message: string): Promise<boolean> {
  if (await settlesWithin(work.settled(), graceMs)) return true;
  logger.warn(work.describe(), message);
  work.abortAll("shutting down");
  await settlesWithin(work.settled(), AFTER_ABORT_MS);
  return false;
}

/** The last step: the output drains within `timeoutMs` and stops. Resolves true when all of it was written. */
export async function flushOutput(output: LineOutput, timeoutMs: number, logger: Logger, fields: () => Record<string, unknown> = () => ({})): Promise<boolean> {
  const flushed = await output.close(timeoutMs);
  if (!flushed) logger.warn(fields(), "output not fully flushed before the timeout");
  return flushed;
}
