/** Bytes of a download so far and in all (every part of a split model together). */
export interface PullProgress {
  downloadedBytes: number;
  totalBytes: number;
}

/**
 * Passes at most one progress report per `intervalMs` (node-llama-cpp reports every network read,
 * hundreds a second): the first at once, then the latest value at the end of each interval, so a
 * download that stalls still shows where it stopped. `finish` sends the last one (all bytes)
 * exactly once and stops the timer; `stop` drops what is pending (a failed or cancelled pull).
 */
export function throttleProgress(report: (progress: PullProgress) => void, intervalMs: number): {
  update(progress: PullProgress): void;
  finish(progress: PullProgress): void;
  stop(): void;
} {
  let last = Number.NEGATIVE_INFINITY;
  let pending: PullProgress | null = null;
  let timer: NodeJS.Timeout | null = null;
  let done = false;
  const flush = (): void => {
    timer = null;
    if (pending === null || done) return;
    const value = pending;
    pending = null;
    last = Date.now();
    report(value);
  };
  return {
    update(progress) {
      if (done) return;
      pending = progress;
      const wait = last + intervalMs - Date.now();
      if (wait <= 0) flush();
      // Unref'd: a pending report never keeps a finished process alive.
      else timer ??= setTimeout(flush, wait).unref();
    },
    finish(progress) {
      if (done) return;
      if (timer !== null) clearTimeout(timer);
      done = true;
      report(progress);
    },
    stop() {
      if (timer !== null) clearTimeout(timer);
      done = true;
    },
  };
}
