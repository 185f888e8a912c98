import type { PromptProgress } from "../chat-types.js";

/** However slow its batches, a server still reading a prompt gets at least this long to stop after an abort. */
const PROMPT_SETTLE_MIN_MS = 5000;
const PROMPT_SETTLE_MAX_MS = 30_000;

/**
 * How fast llama-server reads the prompt of one request, from its prompt_progress chunks (one per
 * batch): a cancel lands only between batches, so after an abort mid-prompt the server may go on
 * for the rest of one batch and, when it saw the closed stream late, one more. That is how long
 * the post-abort check waits before it calls the server stuck (server-requests.ts).
 */
export class PromptPace {
  private lastAt: number | null = null;
  private longestBatchMs = 0;
  private reading = false;

  /** Each prompt_progress chunk of the request (the last one, at processed == total, ends the reading). */
  observe(progress: PromptProgress, now = performance.now()): void {
    if (this.lastAt !== null) this.longestBatchMs = Math.max(this.longestBatchMs, now - this.lastAt);
    this.lastAt = now;
    this.reading = progress.processed < progress.total;
  }

  /** How long the server may take to stop after an abort now; null: not reading a prompt (the default applies). */
  settleMs(now = performance.now()): number | null {
    if (!this.reading || this.lastAt === null) return null;
    // The batch under way when we aborted has run for (now - lastAt) already; two batches bound the rest.
    const batch = Math.max(this.longestBatchMs, now - this.lastAt);
    return Math.min(PROMPT_SETTLE_MAX_MS, Math.max(PROMPT_SETTLE_MIN_MS, 2 * batch + 1000));
  }
}
