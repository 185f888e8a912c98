import { mib, type ProcStats } from "./proc-stats.js";

/** One sample of a long run: the process's stats after `turn` turns. */
export interface GrowthSample extends ProcStats {
  turn: number;
  /** V8 heap in use right after a full collection, when the run can force one. */
  heapUsedBytes?: number;
}

export interface GrowthRule {
  /** Samples before this turn are warm-up (model load, JIT, heaps growing to their working size): not judged. */
  warmupTurns: number;
  /** RSS is judged on the lowest sample of each window of this many turns (the floor under the GC sawtooth). */
  windowTurns: number;
  /** Largest allowed slope of the floors (least squares), in bytes per turn. */
  maxRssSlope: number;
  /** The same for the heap after a collection (judged when the samples have it). */
  maxHeapSlope?: number;
  /** Open fds and threads at the end may exceed the first judged sample by at most this much. */
  maxFdGrowth: number;
  maxThreadGrowth: number;
}

export interface GrowthVerdict {
  /** Lowest RSS of each judged window, at the window's middle turn. */
  floors: Array<{ turn: number; rssBytes: number }>;
  /** Slope of the floors, bytes per turn (0 with fewer than two windows). */
  rssSlope: number;
  /** Slope of the post-collection heap floors, bytes per turn (null without heap figures). */
  heapSlope: number | null;
  /** Floor growth over the first and the second half of the judged windows. */
  firstHalfGrowth: number;
  secondHalfGrowth: number;
  fdGrowth: number;
  threadGrowth: number;
  /** Broken rules, in words; empty when the run passes. */
  problems: string[];
}

/** Least-squares slope of y over x. */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  if (points.length < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / points.length;
  const my = points.reduce((s, p) => s + p.y, 0) / points.length;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * Bounded growth, judged so that a leak fails and noise does not. A garbage-collected heap's RSS
 * is a sawtooth (it grows until a collection, then drops), so one sample against another says
 * little; the lowest sample of each window is the floor a collection comes back to, and a leak is
 * what raises that floor turn after turn. So: the least-squares slope of the floors after
 * warm-up must stay under `maxRssSlope`. File descriptors and threads are not noisy: the count at
 * the end may exceed the first judged one by a few (a file open at the moment of sampling), never
 * by one per turn.
 */
export function judgeGrowth(samples: readonly GrowthSample[], rule: GrowthRule): GrowthVerdict {
  const judged = samples.filter((s) => s.turn >= rule.warmupTurns);
  const problems: string[] = [];
  const first = judged[0];
  const last = judged.at(-1);
  if (first === undefined || last === undefined || judged.length < 2) {
    return { floors: [], rssSlope: 0, heapSlope: null, firstHalfGrowth: 0, secondHalfGrowth: 0, fdGrowth: 0, threadGrowth: 0, problems: [`only ${judged.length} samples after warm-up (turn ${rule.warmupTurns})`] };
  }
  const windows = new Map<number, GrowthSample[]>();
  // Whole windows only: a last sample past the last whole window joins it (alone it would be no floor).
  const count = Math.max(1, Math.floor((last.turn - rule.warmupTurns) / rule.windowTurns));
  for (const sample of judged) {
    const index = Math.min(count - 1, Math.floor((sample.turn - rule.warmupTurns) / rule.windowTurns));
    windows.set(index, [...(windows.get(index) ?? []), sample]);
  }
  const groups = [...windows.entries()].sort(([a], [b]) => a - b);
  const floors = groups.map(([index, group]) => ({ turn: rule.warmupTurns + (index + 0.5) * rule.windowTurns, rssBytes: Math.min(...group.map((s) => s.rssBytes)) }));
  const rssSlope = slope(floors.map((f) => ({ x: f.turn, y: f.rssBytes })));
  const withHeap = judged.every((s) => s.heapUsedBytes !== undefined);
  const heapSlope = withHeap ? slope(groups.map(([index, group]) => ({ x: rule.warmupTurns + (index + 0.5) * rule.windowTurns, y: Math.min(...group.map((s) => s.heapUsedBytes ?? 0)) }))) : null;
  if (heapSlope !== null && rule.maxHeapSlope !== undefined && heapSlope > rule.maxHeapSlope) {
    problems.push(`the heap after a collection grows ${(heapSlope / 1024).toFixed(1)} KiB per turn after turn ${rule.warmupTurns} (allowed ${(rule.maxHeapSlope / 1024).toFixed(1)})`);
  }
  const middle = floors[Math.floor((floors.length - 1) / 2)] ?? floors[0]!;
  const firstHalfGrowth = middle.rssBytes - floors[0]!.rssBytes;
  const secondHalfGrowth = floors.at(-1)!.rssBytes - middle.rssBytes;
  if (rssSlope > rule.maxRssSlope) {
    problems.push(`RSS floor grows ${(rssSlope / 1024).toFixed(1)} KiB per turn after turn ${rule.warmupTurns} (allowed ${(rule.maxRssSlope / 1024).toFixed(1)}); floors ${floors.map((f) => mib(f.rssBytes)).join(", ")} MiB`);
  }
  const fdGrowth = last.fds - first.fds;
  const threadGrowth = last.threads - first.threads;
  if (fdGrowth > rule.maxFdGrowth) problems.push(`open fds grew from ${first.fds} (turn ${first.turn}) to ${last.fds} (turn ${last.turn}); allowed +${rule.maxFdGrowth}`);
  if (threadGrowth > rule.maxThreadGrowth) problems.push(`threads grew from ${first.threads} (turn ${first.turn}) to ${last.threads} (turn ${last.turn}); allowed +${rule.maxThreadGrowth}`);
  return { floors, rssSlope, heapSlope, firstHalfGrowth, secondHalfGrowth, fdGrowth, threadGrowth, problems };
}

/** A compact table of samples: every `every`-th one and the last, RSS in MiB. */
export function sampleTable(samples: readonly GrowthSample[], every: number): string {
  const rows = samples.filter((s, i) => i % every === 0 || i === samples.length - 1);
  const heap = samples.every((s) => s.heapUsedBytes !== undefined);
  const lines = [`turn   rss_mib  peak_mib${heap ? "  heap_mib" : ""}  fds  threads`];
  for (const s of rows) {
    const heapColumn = heap ? `  ${mib(s.heapUsedBytes ?? 0).padStart(8)}` : "";
    lines.push(`${String(s.turn).padStart(5)}  ${mib(s.rssBytes).padStart(7)}  ${mib(s.peakRssBytes).padStart(8)}${heapColumn}  ${String(s.fds).padStart(3)}  ${String(s.threads).padStart(7)}`);
  }
  return lines.join("\n");
}
