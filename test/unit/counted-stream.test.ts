import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countedStream, type StreamHooks } from "../../src/engine/scheduler/counted-stream.js";

/** Hooks that record their calls in order. */
function recorder(admitted: () => Promise<boolean> = async () => false): { hooks: StreamHooks; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    hooks: {
      begin: () => calls.push("begin"),
      admitted: async () => {
        const waited = await admitted();
        calls.push(`admitted:${waited}`);
        return waited;
      },
      firstChunk: (waited) => calls.push(`first:${waited}`),
      failed: () => calls.push("failed"),
      end: () => calls.push("end"),
    },
  };
}

/** An inner stream of `items`, then an error when `error` is given; records whether return() was called. */
function inner(items: number[], error?: Error): { open: () => AsyncIterable<number>; returned: () => boolean; opened: () => number } {
  let returned = false;
  let opened = 0;
  return {
    returned: () => returned,
    opened: () => opened,
    open: () => {
      opened++;
      let at = 0;
      return {
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            if (at < items.length) return { value: items[at++] as number, done: false };
            if (error) throw error;
            return { value: undefined, done: true };
          },
          return: async () => {
            returned = true;
            return { value: undefined, done: true };
          },
        }),
      };
    },
  };
}

describe("countedStream (ManagedEngine's bookkeeping around an engine stream)", () => {
  it("passes every chunk in order; begin, admission, the first chunk and end are reported once each", async () => {
    const { hooks, calls } = recorder(async () => true);
    const source = inner([1, 2, 3]);
    const seen: number[] = [];
    for await (const chunk of countedStream(source.open, hooks)) seen.push(chunk);
    assert.deepEqual(seen, [1, 2, 3]);
    assert.deepEqual(calls, ["begin", "admitted:true", "first:true", "end"]);
  });

  it("a stream with no chunk ends without a first chunk", async () => {
    const { hooks, calls } = recorder();
    for await (const _ of countedStream(inner([]).open, hooks)) assert.fail("no chunk expected");
    assert.deepEqual(calls, ["begin", "admitted:false", "end"]);
  });

  it("an error mid-stream reaches the consumer after the chunks before it; failed, then end", async () => {
    const { hooks, calls } = recorder();
    const seen: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of countedStream(inner([1, 2], new Error("boom")).open, hooks)) seen.push(chunk);
      })(),
      /boom/,
    );
    assert.deepEqual(seen, [1, 2]);
    assert.deepEqual(calls, ["begin", "admitted:false", "first:false", "failed", "end"]);
  });

  it("a refused admission fails before the engine is opened", async () => {
    const { hooks, calls } = recorder(async () => {
      throw new Error("no memory");
    });
    const source = inner([1]);
    await assert.rejects(
      (async () => {
        for await (const _ of countedStream(source.open, hooks)) assert.fail("no chunk expected");
      })(),
      /no memory/,
    );
    assert.equal(source.opened(), 0);
    assert.deepEqual(calls, ["begin", "failed", "end"]);
  });

  it("a consumer that stops early closes the engine stream; end once, no failure", async () => {
    const { hooks, calls } = recorder();
    const source = inner([1, 2, 3]);
    for await (const chunk of countedStream(source.open, hooks)) if (chunk === 2) break;
    assert.equal(source.returned(), true);
    assert.deepEqual(calls, ["begin", "admitted:false", "first:false", "end"]);
  });

  it("calls made while admission is pending queue behind the first; a close then waits and closes the opened stream", async () => {
    let admit: (waited: boolean) => void = () => undefined;
    const { hooks, calls } = recorder(() => new Promise<boolean>((resolve) => (admit = resolve)));
    const source = inner([1, 2, 3]);
    const iterator = countedStream(source.open, hooks)[Symbol.asyncIterator]();
    const first = iterator.next();
    const second = iterator.next();
    const closed = iterator.return?.();
    admit(false);
    assert.deepEqual(await first, { value: 1, done: false });
    assert.deepEqual(await second, { value: 2, done: false });
    assert.deepEqual(await closed, { value: undefined, done: true });
    assert.equal(source.opened(), 1);
    assert.equal(source.returned(), true);
    assert.deepEqual(calls, ["begin", "admitted:false", "first:false", "end"]);
  });

  it("an iterator closed before its first next() never begins", async () => {
    const { hooks, calls } = recorder();
    const iterator = countedStream(inner([1]).open, hooks)[Symbol.asyncIterator]();
    assert.deepEqual(await iterator.return?.(), { value: undefined, done: true });
    assert.deepEqual(await iterator.next(), { value: undefined, done: true });
    assert.deepEqual(calls, []);
  });
});
