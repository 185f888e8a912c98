import type { PromptProgress } from "../engine/chat-types.js";
import type { EmitEvent } from "./events.js";

/** A prompt read faster than this shows no progress at all (most turns). */
const FIRST_AFTER_MS = 1000;
const AT_MOST_EVERY_MS = 500;
const AT_LEAST_EVERY_MS = 2000;

/**
 * Turns an engine's raw prompt-reading reports (every chunk) into the step's `prompt_progress`
 * events: none for a prompt read within a second; then at most every 0.5 s, and at least every
 * 2 s (the last figure again when the engine is slower than that); `processed` never decreases,
 * and the last event before the step's first output says `processed == total`.
 */
export class PromptProgressGate {
  private startedAt: number | null = null;
  private latest: PromptProgress | null = null;
  private lastSentAt = -Infinity;
  private sentProcessed = -1;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly step: number,
    private readonly emit: EmitEvent,
  ) {}

  /** An engine report (any rate). */
  readonly observe = (progress: PromptProgress): void => {
    if (this.closed) return;
    const processed = Math.max(progress.processed, this.latest?.processed ?? 0);
    this.latest = { processed, total: progress.total, cached: progress.cached };
    const now = performance.now();
    if (this.startedAt === null) {
      this.startedAt = now;
      this.arm(FIRST_AFTER_MS);
      return;
    }
    if (now - this.startedAt < FIRST_AFTER_MS) return;
    const wait = this.lastSentAt + AT_MOST_EVERY_MS - now;
    // Too soon after the last event: the newest figure goes out when the half second is up.
    if (wait <= 0) this.send();
    else this.arm(wait);
  };

  /** The step's first output (or its end): the prompt is read; progress shown so far ends at 100 %. */
  done(): void {
    if (this.closed) return;
    const latest = this.latest;
    if (this.sentProcessed >= 0 && latest !== null && this.sentProcessed < latest.total) {
      this.latest = { ...latest, processed: latest.total };
      this.send();
    }
    this.close();
  }

  /** No more events (cancelled, failed, done). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private send(): void {
    const latest = this.latest;
    if (latest === null || this.closed) return;
    this.lastSentAt = performance.now();
    this.sentProcessed = latest.processed;
    this.emit({ event: "prompt_progress", step: this.step, ...latest });
    this.arm(AT_LEAST_EVERY_MS);
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.send(), ms);
    // Progress must never hold the process open on its own.
    this.timer.unref();
  }
}
