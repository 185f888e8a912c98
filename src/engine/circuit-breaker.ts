// A circuit breaker (the llama-server child's, and each endpoint of an openai model): after repeated failures in a window it opens,
// so callers fail fast instead of queueing behind a crash loop; after a cool-down it lets one
// probe through (half-open) and closes again only when that probe succeeds.
import type { CircuitState } from "./engine.js";

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface CircuitBreakerOptions {
  /** Failures within `windowMs` that open the circuit. */
  failureThreshold: number;
  windowMs: number;
  /** How long the circuit stays open before one probe is allowed. */
  cooldownMs: number;
  clock?: Clock;
  /** Told each transition as it happens: opened (again), a probe let through, closed by a success. */
  onChange?: (state: CircuitState) => void;
}

export const DEFAULT_BREAKER_OPTIONS: Readonly<Required<Omit<CircuitBreakerOptions, "clock" | "onChange">>> = {
  failureThreshold: 3,
  windowMs: 60_000,
  cooldownMs: 30_000,
};

export class CircuitBreaker {
  private readonly clock: Clock;
  private failures: number[] = [];
  private openedAt: number | null = null;
  private probing = false;

  constructor(private readonly options: CircuitBreakerOptions) {
    this.clock = options.clock ?? systemClock;
  }

  get state(): CircuitState {
    if (this.openedAt === null) return "closed";
    return this.clock.now() - this.openedAt >= this.options.cooldownMs ? "half_open" : "open";
  }

  /** Milliseconds until a probe is allowed (0 when it is allowed now). */
  get retryInMs(): number {
    if (this.openedAt === null) return 0;
    return Math.max(0, this.openedAt + this.options.cooldownMs - this.clock.now());
  }

  /** Failures counted in the current window. */
  get recentFailures(): number {
    this.prune();
    return this.failures.length;
  }

  /**
   * May an attempt start now? Closed: yes. Open: no. Half-open: yes for exactly one caller (the
   * probe) until it reports back through recordSuccess or recordFailure.
   */
  tryAcquire(): boolean {
    const state = this.state;
    if (state === "closed") return true;
    if (state === "open" || this.probing) return false;
    this.probing = true;
    this.options.onChange?.("half_open");
    return true;
  }

  recordSuccess(): void {
    const wasOpen = this.openedAt !== null;
    this.failures = [];
    this.openedAt = null;
    this.probing = false;
    if (wasOpen) this.options.onChange?.("closed");
  }

  recordFailure(): void {
    const now = this.clock.now();
    if (this.probing || this.openedAt !== null) {
      // The probe failed (or a straggler reported late): open again for a full cool-down.
      this.probing = false;
      this.openedAt = now;
      this.options.onChange?.("open");
      return;
    }
    this.failures.push(now);
    this.prune();
    if (this.failures.length >= this.options.failureThreshold) {
      this.openedAt = now;
      this.options.onChange?.("open");
    }
  }

  reset(): void {
    this.recordSuccess();
  }

  private prune(): void {
    const since = this.clock.now() - this.options.windowMs;
    this.failures = this.failures.filter((at) => at > since);
  }
}
