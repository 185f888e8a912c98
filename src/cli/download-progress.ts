import { formatBytes } from "../shared/format-bytes.js";

export interface DownloadProgressOptions {
  /** A terminal: one bar redrawn in place. Otherwise a plain line every 10 % (or 30 s). */
  tty: boolean;
  /** Terminal width for the bar; 80 when unknown. */
  columns?: number;
  now?: () => number;
}

/** Speed is averaged over this window: steady enough to read, quick enough to follow a change. */
const SPEED_WINDOW_MS = 5000;
const LINE_EVERY_PERCENT = 10;
const LINE_EVERY_MS = 30_000;

/**
 * `local-ai pull`'s progress on stderr: size, percent, speed and time left. On a terminal a bar
 * that redraws itself (`\r`, erase line); in a log or a pipe, plain lines a person or a script
 * can read (no control characters).
 */
export class DownloadProgress {
  private readonly samples: Array<{ at: number; bytes: number }> = [];
  private lastLinePercent = -LINE_EVERY_PERCENT;
  private lastLineAt = 0;
  private drawn = false;
  private readonly now: () => number;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly options: DownloadProgressOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  update(downloadedBytes: number, totalBytes: number): void {
    const at = this.now();
    this.samples.push({ at, bytes: downloadedBytes });
    while (this.samples.length > 2 && at - (this.samples[0]?.at ?? at) > SPEED_WINDOW_MS) this.samples.shift();
    const percent = totalBytes > 0 ? Math.min(100, (downloadedBytes * 100) / totalBytes) : 0;
    const facts = this.facts(downloadedBytes, totalBytes, percent);
    if (this.options.tty) {
      const width = Math.max(10, Math.min(40, (this.options.columns ?? 80) - facts.length - 4));
      const filled = Math.round((percent / 100) * width);
      this.out.write(`\r\u001b[2K[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${facts}`);
      this.drawn = true;
      return;
    }
    if (percent - this.lastLinePercent >= LINE_EVERY_PERCENT || at - this.lastLineAt >= LINE_EVERY_MS) {
      this.lastLinePercent = percent - (percent % LINE_EVERY_PERCENT);
      this.lastLineAt = at;
      this.out.write(`downloaded ${facts}\n`);
    }
  }

  /** Ends the bar's line (so what follows starts on a fresh one). */
  end(): void {
    if (this.drawn) this.out.write("\n");
    this.drawn = false;
  }

  /** Bytes per second over the window; 0 until two samples exist. */
  speed(): number {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (first === undefined || last === undefined || last.at <= first.at) return 0;
    return ((last.bytes - first.bytes) * 1000) / (last.at - first.at);
  }

  private facts(downloaded: number, total: number, percent: number): string {
    const speed = this.speed();
    const left = speed > 0 && total > downloaded ? ` ${formatDuration((total - downloaded) / speed)} left` : "";
    const rate = speed > 0 ? ` ${formatBytes(speed)}/s` : "";
    return `${percent.toFixed(0).padStart(3)}% ${formatBytes(downloaded)} of ${formatBytes(total)}${rate}${left}`;
  }
}

/** 75 -> "1m15s", 3700 -> "1h01m", 9 -> "9s". */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole}s`;
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, "0")}s`;
  return `${Math.floor(whole / 3600)}h${String(Math.floor((whole % 3600) / 60)).padStart(2, "0")}m`;
}
