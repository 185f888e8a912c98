// The soak's growth rule must fail a leak and pass a healthy garbage-collected process: checked on
// synthetic series shaped like real ones (a warm-up ramp, a GC sawtooth, seeded jitter).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { judgeGrowth, sampleTable, slope, type GrowthSample, type GrowthRule } from "../helpers/growth-verdict.js";
import { MiB } from "../helpers/proc-stats.js";

const RULE: GrowthRule = { warmupTurns: 200, windowTurns: 100, maxRssSlope: 8 * 1024, maxFdGrowth: 3, maxThreadGrowth: 2 };

/** A seeded generator (mulberry32), so each series is the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Shape {
  /** Bytes retained per turn (the leak). */
  leak?: number;
  /** An fd that stays open every this many turns. */
  fdLeakEvery?: number;
  seed?: number;
}

/** 1,000 turns sampled every 10: a 60 MiB warm-up ramp over 150 turns, a sawtooth of up to 24 MiB (collections every 37 turns), jitter of 2 MiB, and whatever leak the shape asks for. */
function series(shape: Shape): GrowthSample[] {
  const rand = random(shape.seed ?? 7);
  const samples: GrowthSample[] = [];
  for (let turn = 0; turn <= 1000; turn += 10) {
    const warm = Math.min(turn, 150) / 150 * 60 * MiB;
    const saw = ((turn % 37) / 37) * 24 * MiB;
    const rss = 80 * MiB + warm + saw + rand() * 2 * MiB + turn * (shape.leak ?? 0);
    const fds = 30 + (rand() < 0.2 ? 1 : 0) + (shape.fdLeakEvery ? Math.floor(turn / shape.fdLeakEvery) : 0);
    samples.push({ turn, rssBytes: rss, peakRssBytes: rss, fds, threads: 12 });
  }
  return samples;
}

describe("judgeGrowth (the soak's leak rule)", () => {
  it("passes a healthy process: warm-up ramp, GC sawtooth and jitter, over several seeds", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const verdict = judgeGrowth(series({ seed }), RULE);
      assert.deepEqual(verdict.problems, [], `seed ${seed}`);
      assert.equal(verdict.floors.length, 8);
    }
  });

  it("fails a leak of 16 KiB per turn (16 MiB over 1,000 turns) hidden in the same noise", () => {
    for (const seed of [1, 2, 3]) {
      const verdict = judgeGrowth(series({ leak: 16 * 1024, seed }), RULE);
      assert.equal(verdict.problems.length, 1, `seed ${seed}`);
      assert.match(verdict.problems[0] ?? "", /^RSS floor grows 1\d\.\d KiB per turn after turn 200 \(allowed 8\.0\)/);
    }
  });

  it("fails one fd kept open per 50 turns, passes a file open at the moment of sampling", () => {
    const leaking = judgeGrowth(series({ fdLeakEvery: 50 }), RULE);
    assert.deepEqual(leaking.problems.map((p) => p.replace(/\d+/g, "N")), ["open fds grew from N (turn N) to N (turn N); allowed +N"]);
    assert.ok(leaking.fdGrowth >= 15);
    assert.deepEqual(judgeGrowth(series({}), RULE).problems, []);
  });

  it("says so when the run is too short to judge", () => {
    assert.deepEqual(judgeGrowth(series({}).slice(0, 15), RULE).problems, ["only 0 samples after warm-up (turn 200)"]);
  });

  it("slope is the least-squares slope; the table lists every n-th sample and the last", () => {
    assert.equal(slope([{ x: 0, y: 1 }, { x: 1, y: 3 }, { x: 2, y: 5 }]), 2);
    assert.equal(slope([{ x: 1, y: 1 }]), 0);
    const table = sampleTable(series({}), 50).split("\n");
    assert.equal(table[0], "turn   rss_mib  peak_mib  fds  threads");
    assert.deepEqual(table.slice(1).map((line) => Number(line.trim().split(/\s+/)[0])), [0, 500, 1000]);
  });
});
