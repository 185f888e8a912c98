import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LlamaContext, LlamaContextSequence, Token } from "node-llama-cpp";
import { SequencePool, sharedPrefix } from "../../src/engine/embedded/sequence-pool.js";
import { SlotAffinity } from "../../src/engine/llama-server/slot-affinity.js";

/** Sequences are only asked for their tokens here: a context whose sequences hold what the test says. */
function poolOf(contents: number[][]): { pool: SequencePool; sequences: Array<{ contextTokens: Token[] }> } {
  const sequences = contents.map((tokens) => ({ contextTokens: tokens as Token[] }));
  let next = 0;
  const context = { getSequence: () => sequences[next++] } as unknown as LlamaContext;
  return { pool: new SequencePool(context, sequences.length), sequences };
}

const tokens = (...values: number[]): Token[] => values as Token[];

describe("KV cache affinity", () => {
  it("sharedPrefix counts the leading tokens two lists have in common", () => {
    assert.equal(sharedPrefix(tokens(1, 2, 3), tokens(1, 2, 4)), 2);
    assert.equal(sharedPrefix(tokens(), tokens(1)), 0);
    assert.equal(sharedPrefix(tokens(5, 6), tokens(5, 6, 7)), 2);
  });

  it("the pool gives the sequence the prompt continues; else an empty one; else the least recently used", async () => {
    const { pool, sequences } = poolOf([[1, 2, 3, 4], [1, 2, 8, 9], []]);
    const [a, b, c] = sequences as [LlamaContextSequence, LlamaContextSequence, LlamaContextSequence];
    assert.equal(await pool.acquire(undefined, tokens(1, 2, 8, 9, 10)), b, "b's whole conversation is the prompt's prefix");
    pool.release(b);
    // Shares only [1, 2] (a "system prompt") with a and b: continues neither, so the empty c is taken.
    assert.equal(await pool.acquire(undefined, tokens(1, 2, 5)), c);
    // A continuation whose tail was tokenized differently (3 of 4 tokens) still counts.
    assert.equal(await pool.acquire(undefined, tokens(1, 2, 3, 7, 7)), a);
    pool.release(a);
    pool.release(c);
    (sequences[2] as { contextTokens: Token[] }).contextTokens = tokens(1, 2, 5, 6); // c now holds its conversation
    // Nothing continued, nothing empty: the least recently used (b) is evicted.
    assert.equal(await pool.acquire(undefined, tokens(42)), b);
    assert.equal(pool.available, 2);
  });

  it("llama-server slots: a conversation keeps its slot; a new one takes the least recently used idle slot", () => {
    const slots = new SlotAffinity(2);
    const a = slots.acquire("user/a");
    slots.release(a);
    const b = slots.acquire("user/b");
    slots.release(b);
    assert.notEqual(a, b);
    assert.equal(slots.acquire("user/a"), a, "a goes back to its slot");
    // a is busy now: b keeps its own slot, and a third conversation finds no idle slot.
    assert.equal(slots.acquire("user/b"), b);
    assert.equal(slots.acquire("user/c"), null, "every slot busy: llama-server chooses");
    slots.release(a);
    slots.release(b);
    // c evicts the least recently used: a was used before b's last turn.
    assert.equal(slots.acquire("user/c"), a);
    assert.equal(slots.acquire(undefined), null, "no conversation, no preference");
    assert.equal(new SlotAffinity(0).acquire("x"), null);
  });
});
