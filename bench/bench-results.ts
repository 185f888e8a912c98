import { appendFileSync } from "node:fs";

/** One figure of a bench, as a ratio against its baseline in the same run. */
export interface BenchRatio {
  /** What was compared, e.g. "serve-stdio: spawn -> first ping / bare node". */
  name: string;
  value: number;
  /** The target in words ("<= 2x", ">= 0.95"), where the issue sets one. */
  target?: string;
  /** Whether `value` meets `target`; absent without a target. */
  met?: boolean;
}

export interface BenchResult {
  bench: string;
  ratios: BenchRatio[];
}

/** The prefix of the machine-readable line each bench writes to stderr. */
export const RESULT_PREFIX = "BENCH_RESULT ";

/**
 * Reports a bench's ratios in a machine-readable form, besides its own human output on stdout:
 * one `BENCH_RESULT {json}` line on stderr, and the same JSON as a line appended to
 * `$BENCH_RESULTS_FILE` when set (how `npm run bench` collects every bench's ratios into one table).
 */
export function reportRatios(bench: string, ratios: BenchRatio[]): void {
  const line = JSON.stringify({ bench, ratios } satisfies BenchResult);
  process.stderr.write(`${RESULT_PREFIX}${line}\n`);
  const file = process.env.BENCH_RESULTS_FILE;
  if (file !== undefined && file !== "") appendFileSync(file, `${line}\n`);
}

/** A ratio with an upper (`<=`) or lower (`>=`) target. */
export function ratio(name: string, value: number, target?: { atMost?: number; atLeast?: number; unit?: string }): BenchRatio {
  if (target === undefined) return { name, value };
  const unit = target.unit ?? "x";
  if (target.atMost !== undefined) return { name, value, target: `<= ${target.atMost}${unit}`, met: value <= target.atMost };
  if (target.atLeast !== undefined) return { name, value, target: `>= ${target.atLeast}${unit}`, met: value >= target.atLeast };
  return { name, value };
}

/** The median of the finite values (a figure a run could not produce, NaN, is left out); NaN when there is none. */
export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The lower quartile, median and upper quartile of the finite values (nearest-rank on the sorted list; NaN when there is none). */
export function quartiles(values: readonly number[]): { q1: number; median: number; q3: number } {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { q1: Number.NaN, median: Number.NaN, q3: Number.NaN };
  const at = (q: number): number => {
    const position = (sorted.length - 1) * q;
    const low = Math.floor(position);
    const high = Math.ceil(position);
    return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (position - low);
  };
  return { q1: at(0.25), median: median(sorted), q3: at(0.75) };
}
