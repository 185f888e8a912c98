import assert from "node:assert/strict";
import { test } from "node:test";
import { PromptPace } from "../../src/engine/llama-server/prompt-pace.js";

test("PromptPace: no prompt under way -> null (the default settle time applies)", () => {
  const pace = new PromptPace();
  assert.equal(pace.settleMs(0), null);
  pace.observe({ processed: 0, total: 100, cached: 0 }, 0);
  pace.observe({ processed: 100, total: 100, cached: 0 }, 50);
  assert.equal(pace.settleMs(60), null, "the prompt is read");
});

test("PromptPace: mid-prompt the server gets two of its slowest batches (at least 5 s, at most 30 s) to stop", () => {
  const pace = new PromptPace();
  pace.observe({ processed: 0, total: 6000, cached: 0 }, 0);
  assert.equal(pace.settleMs(100), 5000);
  pace.observe({ processed: 512, total: 6000, cached: 0 }, 4000);
  pace.observe({ processed: 1024, total: 6000, cached: 0 }, 7000);
  assert.equal(pace.settleMs(7100), 2 * 4000 + 1000);
  assert.equal(pace.settleMs(13_000), 2 * 6000 + 1000, "a batch under way for longer than any before counts");
  assert.equal(pace.settleMs(100_000), 30_000);
});
