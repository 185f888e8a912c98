import type { Logger } from "pino";
import { settlesWithin } from "../shared/abort.js";
import type { LineOutput } from "./line-output.js";

/** How long cancelled work gets to answer `cancelled` after the grace period. */
const AFTER_ABORT_MS = 1000;

/** The work a server has in flight, as its shutdown sees it (requests, prompts, a pod's turn, HTTP connections). */
export interface InFlightWork {
  /** Resolves once nothing is in flight. */
  settled(): Promise<void>;
  /** Cancels everything still running (it then answers `cancelled`). */
  abortAll(reason: string): void;
  /** Fields for the log line that names what was cancelled. */
  describe(): Record<string, unknown>;
}

export interface SettleOptions {
  /** The abort reason handed to `abortAll` (default "shutting down"). */
  reason?: string;
  /** How long aborted work gets to settle (default 1 s); Infinity waits until it has. */
  afterAbortMs?: number;
}

/**
 * The settle step of every server's shutdown (the line server's v1, JSON-RPC and ACP; the Pod's
 * turn; HTTP's connections), once nothing new is taken: work in flight gets `graceMs` to finish;
 * then what still runs is aborted (logged as `message`) and gets a short while to settle.
 * Resolves true when everything finished within the grace period.
 */
export async function settleInFlight(work: InFlightWork, graceMs: number, logger: Logger, message: string, options: SettleOptions = {}): Promise<boolean> {
  if (await settlesWithin(work.settled(), graceMs)) return true;
  logger.warn(work.describe(), message);
  work.abortAll(options.reason ?? "shutting down");
  const afterAbortMs = options.afterAbortMs ?? AFTER_ABORT_MS;
  if (afterAbortMs === Infinity) await work.settled();
  else await settlesWithin(work.settled(), afterAbortMs);
  return false;
}

/** The last step: the output drains within `timeoutMs` and stops. Resolves true when all of it was written. */
export async function flushOutput(output: LineOutput, timeoutMs: number, logger: Logger, fields: () => Record<string, unknown> = () => ({})): Promise<boolean> {
  const flushed = await output.close(timeoutMs);
  if (!flushed) logger.warn(fields(), "output not fully flushed before the timeout");
  return flushed;
}
