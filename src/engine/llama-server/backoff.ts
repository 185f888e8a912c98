// Exponential restart backoff with jitter: a crash loop must not spin the CPU, and two of our
// processes restarting servers at the same moment should not stay in lock-step.

export interface BackoffOptions {
  initialMs: number;
  factor: number;
  maxMs: number;
  /** Fraction of the delay that is random: the delay is drawn from [base * (1 - jitter), base]. */
  jitter: number;
  /** Injected in tests; returns [0, 1). */
  random?: () => number;
}

export const DEFAULT_BACKOFF_OPTIONS: Readonly<Required<Omit<BackoffOptions, "random">>> = {
  initialMs: 250,
  factor: 2,
  maxMs: 10_000,
  jitter: 0.2,
};

export class Backoff {
  private attempt = 0;
  private readonly random: () => number;

  constructor(private readonly options: BackoffOptions) {
    this.random = options.random ?? Math.random;
  }

  /** Delays handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  /** The delay before the next attempt; each call doubles the base up to the cap. */
  next(): number {
    const { initialMs, factor, maxMs, jitter } = this.options;
    const base = Math.min(maxMs, initialMs * factor ** this.attempt);
    this.attempt += 1;
    return Math.round(base * (1 - jitter * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }
}
