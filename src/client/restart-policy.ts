/** How the client restarts a child that exited on its own. */
export interface RestartOptions {
  /** Consecutive restarts before the client gives up (default 5). */
  maxRestarts?: number;
  /** Delay before the first restart; doubled for each further one (default 250 ms). */
  initialDelayMs?: number;
  /** Upper bound of the delay (default 10 000 ms). */
  maxDelayMs?: number;
  /** A child that ran this long before exiting resets the count (default 60 000 ms). */
  resetAfterMs?: number;
}

export type RestartPolicy = Required<RestartOptions>;

export function restartPolicy(options: RestartOptions | false | undefined): RestartPolicy | null {
  if (options === false) return null;
  const policy: RestartPolicy = { maxRestarts: 5, initialDelayMs: 250, maxDelayMs: 10_000, resetAfterMs: 60_000, ...options };
  for (const [key, value] of Object.entries(policy)) {
    if (!Number.isFinite(value) || value < 0) throw new TypeError(`restart.${key} must be a number >= 0 (got ${String(value)})`);
  }
  return policy;
}

/** The wait before restart number `attempt` (1-based): exponential, capped. */
export function restartDelay(policy: RestartPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, attempt - 1));
}
