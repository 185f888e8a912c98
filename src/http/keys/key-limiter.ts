const WINDOW_MS = 60_000;

export type Admission = { ok: true; release: () => void } | { ok: false; limit: "max_concurrent" | "requests_per_minute"; retryAfterS: number };

/**
 * One key's `max_concurrent` and `requests_per_minute`. The minute is a sliding window over the
 * admitted requests' start times (at most `requests_per_minute` kept), so Retry-After is exact:
 * the seconds until the oldest leaves the window. A refused request counts against neither limit.
 */
export class KeyLimiter {
  private running = 0;
  private readonly started: number[] = [];

  constructor(
    private readonly limits: { maxConcurrent: number | null; requestsPerMinute: number | null },
    private readonly now: () => number = Date.now,
  ) {}

  admit(): Admission {
    const { maxConcurrent, requestsPerMinute } = this.limits;
    // Nothing says when a running request ends: one second is the shortest honest wait.
    if (maxConcurrent !== null && this.running >= maxConcurrent) return { ok: false, limit: "max_concurrent", retryAfterS: 1 };
    const now = this.now();
    if (requestsPerMinute !== null) {
      while (this.started.length > 0 && (this.started[0] ?? 0) <= now - WINDOW_MS) this.started.shift();
      const oldest = this.started[0];
      if (this.started.length >= requestsPerMinute && oldest !== undefined) {
        return { ok: false, limit: "requests_per_minute", retryAfterS: Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000)) };
      }
      this.started.push(now);
    }
    this.running += 1;
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.running -= 1;
      },
    };
  }

  get inFlight(): number {
    return this.running;
  }
}
