import { delay } from "../../shared/abort.js";

const FIRST_MS = 250;
const CAP_MS = 10_000;

/**
 * Spacing of reconnects to a remote server that keeps failing: after n failed attempts in a row
 * the next waits until 250 ms * 2^(n-1) (at most 10 s) have passed since the last failure. A
 * success resets it. Reconnects only happen for calls, so an idle server is never polled.
 */
export class ReconnectBackoff {
  private failures = 0;
  private lastFailureAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** How long the next attempt must still wait (0 when it may go now). */
  remainingMs(): number {
    if (this.failures === 0) return 0;
    const wait = Math.min(CAP_MS, FIRST_MS * 2 ** (this.failures - 1));
    return Math.max(0, this.lastFailureAt + wait - this.now());
  }

  async wait(): Promise<void> {
    const ms = this.remainingMs();
    if (ms > 0) await delay(ms);
  }

  failed(): void {
    this.failures += 1;
    this.lastFailureAt = this.now();
  }

  succeeded(): void {
    this.failures = 0;
  }
}
