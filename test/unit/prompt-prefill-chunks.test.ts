import assert from "node:assert/strict";
import { test } from "node:test";
import { nextChunkSize } from "../../src/engine/embedded/prompt-prefill.js";

test("nextChunkSize: sized for ~0.5 s of work at the speed just measured, at most 2x up or down a step", () => {
  // 256 tokens in 100 ms: 1280 would fit 0.5 s, but a step at most doubles.
  assert.equal(nextChunkSize(256, 256, 100, 512, 256), 512);
  assert.equal(nextChunkSize(512, 512, 200, 512, 1024), 512, "never above the context's batch");
  // 256 tokens in 1000 ms: 128 fit 0.5 s.
  assert.equal(nextChunkSize(256, 256, 1000, 512, 256), 128);
  // 256 tokens in 8000 ms: 16 would fit, but a step at most halves.
  assert.equal(nextChunkSize(256, 256, 8000, 512, 256), 128);
});

test("nextChunkSize: the floor is 64 tokens near the start and 128 past 4096 tokens deep", () => {
  assert.equal(nextChunkSize(128, 128, 2000, 512, 2000), 64);
  assert.equal(nextChunkSize(64, 64, 2000, 512, 2000), 64);
  assert.equal(nextChunkSize(64, 64, 2000, 512, 4096), 128, "past 4096 the floor lifts a 64-token chunk");
  assert.equal(nextChunkSize(128, 128, 5000, 512, 9000), 128);
  assert.equal(nextChunkSize(256, 256, 5000, 512, 9000), 128);
});

test("nextChunkSize: a remainder chunk (fewer tokens than asked) says nothing about speed; a tiny batch caps the floor", () => {
  assert.equal(nextChunkSize(256, 10, 1, 512, 300), 256);
  assert.equal(nextChunkSize(64, 10, 1, 512, 5000), 128, "the deep floor applies even then");
  assert.equal(nextChunkSize(32, 32, 1000, 32, 5000), 32, "a context batch of 32 is the most and the least");
});
