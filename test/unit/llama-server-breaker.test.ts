import assert from "node:assert/strict";
import { test } from "node:test";
import { Backoff, DEFAULT_BACKOFF_OPTIONS } from "../../src/engine/llama-server/backoff.js";
import { CircuitBreaker, DEFAULT_BREAKER_OPTIONS, type Clock } from "../../src/engine/circuit-breaker.js";
import { DegradationLadder, nextTier, shapeForTier } from "../../src/engine/llama-server/degradation.js";

class FakeClock implements Clock {
  constructor(public t = 1_000_000) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

const breaker = (clock: FakeClock): CircuitBreaker => new CircuitBreaker({ ...DEFAULT_BREAKER_OPTIONS, clock });

test("the circuit opens after 3 failures within 60 s, not for failures spread wider", () => {
  const clock = new FakeClock();
  const spread = breaker(clock);
  for (let i = 0; i < 5; i++) {
    spread.recordFailure();
    clock.advance(30_001);
  }
  assert.equal(spread.state, "closed", "at most two failures are ever inside one window");

  const burst = breaker(clock);
  burst.recordFailure();
  clock.advance(10_000);
  burst.recordFailure();
  assert.equal(burst.state, "closed");
  assert.equal(burst.recentFailures, 2);
  clock.advance(10_000);
  burst.recordFailure();
  assert.equal(burst.state, "open");
  assert.equal(burst.tryAcquire(), false, "open: callers fail fast");
  assert.equal(burst.retryInMs, 30_000);
});

test("after the cool-down exactly one probe goes through; its success closes the circuit", () => {
  const clock = new FakeClock();
  const b = breaker(clock);
  for (let i = 0; i < 3; i++) b.recordFailure();
  clock.advance(29_999);
  assert.equal(b.state, "open");
  clock.advance(1);
  assert.equal(b.state, "half_open");
  assert.equal(b.retryInMs, 0);
  assert.equal(b.tryAcquire(), true, "the probe");
  assert.equal(b.tryAcquire(), false, "only one probe at a time");
  b.recordSuccess();
  assert.equal(b.state, "closed");
  assert.equal(b.recentFailures, 0);
  assert.equal(b.tryAcquire(), true);
});

test("a failed probe opens the circuit again for a full cool-down", () => {
  const clock = new FakeClock();
  const b = breaker(clock);
  for (let i = 0; i < 3; i++) b.recordFailure();
  clock.advance(30_000);
  assert.equal(b.tryAcquire(), true);
  b.recordFailure();
  assert.equal(b.state, "open");
  assert.equal(b.retryInMs, 30_000);
  clock.advance(30_000);
  assert.equal(b.state, "half_open");
});

test("every transition is reported once, as it happens: open, half_open (the probe), open again, half_open, closed", () => {
  const clock = new FakeClock();
  const seen: string[] = [];
  const watched = new CircuitBreaker({ ...DEFAULT_BREAKER_OPTIONS, clock, onChange: (state) => seen.push(state) });
  watched.recordFailure();
  watched.recordFailure();
  assert.deepEqual(seen, [], "below the threshold nothing changes");
  watched.recordFailure();
  assert.equal(watched.tryAcquire(), false);
  clock.advance(30_000);
  assert.deepEqual(seen, ["open"], "the cool-down ending is not a transition: the probe is");
  assert.equal(watched.tryAcquire(), true);
  assert.equal(watched.tryAcquire(), false, "one probe only");
  watched.recordFailure();
  clock.advance(30_000);
  assert.equal(watched.tryAcquire(), true);
  watched.recordSuccess();
  watched.recordSuccess();
  assert.deepEqual(seen, ["open", "half_open", "open", "half_open", "closed"]);
});

test("backoff doubles from 250 ms to a 10 s cap with at most 20% jitter below the base", () => {
  const none = new Backoff({ ...DEFAULT_BACKOFF_OPTIONS, random: () => 0 });
  assert.deepEqual(Array.from({ length: 8 }, () => none.next()), [250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
  assert.equal(none.attempts, 8);
  none.reset();
  assert.equal(none.next(), 250);

  const full = new Backoff({ ...DEFAULT_BACKOFF_OPTIONS, random: () => 0.999999 });
  assert.deepEqual(Array.from({ length: 3 }, () => full.next()), [200, 400, 800]);
});

test("degradation tiers halve the context, then drop the GPU, skipping tiers that change nothing", () => {
  const base = { ctxSize: 4096, gpuLayers: 99 };
  assert.deepEqual(shapeForTier("NORMAL", base), base);
  assert.deepEqual(shapeForTier("REDUCED_CONTEXT", base), { ctxSize: 2048, gpuLayers: 99 });
  assert.deepEqual(shapeForTier("CPU_ONLY", base), { ctxSize: 2048, gpuLayers: 0 });
  assert.equal(nextTier("NORMAL", base), "REDUCED_CONTEXT");
  assert.equal(nextTier("CPU_ONLY", base), null);
  // Already small and on CPU: there is nothing left to give up.
  assert.equal(nextTier("NORMAL", { ctxSize: 512, gpuLayers: 0 }), null);
  assert.equal(nextTier("NORMAL", { ctxSize: 512, gpuLayers: 20 }), "CPU_ONLY");
  assert.deepEqual(shapeForTier("REDUCED_CONTEXT", { ctxSize: 300, gpuLayers: 0 }), { ctxSize: 300, gpuLayers: 0 });
});

test("the ladder steps down after two start failures in a row on a tier; a start resets the count", () => {
  const ladder = new DegradationLadder({ ctxSize: 4096, gpuLayers: 99 });
  assert.equal(ladder.recordStartFailure(), null);
  ladder.recordStarted();
  assert.equal(ladder.recordStartFailure(), null);
  assert.equal(ladder.recordStartFailure(), "REDUCED_CONTEXT");
  assert.deepEqual(ladder.shape, { ctxSize: 2048, gpuLayers: 99 });
  assert.equal(ladder.recordStartFailure(), null);
  assert.equal(ladder.recordStartFailure(), "CPU_ONLY");
  assert.equal(ladder.recordStartFailure(), null);
  assert.equal(ladder.recordStartFailure(), null, "the bottom tier stays");
  assert.equal(ladder.tier, "CPU_ONLY");
});
