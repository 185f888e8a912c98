import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import type { LineItem } from "../../src/shared/line-splitter.js";
import type { LineOutput } from "../../src/serving/line-output.js";
import { flushOutput, settleInFlight } from "../../src/serving/shutdown-sequence.js";
import { runStdioReadLoop } from "../../src/serving/stdio-read-loop.js";
import { captureLogger } from "../helpers/capture-logger.js";

/** The stdio serving core every stdio dialect (v1, JSON-RPC, ACP) sits on: read loop and shutdown sequence. */
describe("runStdioReadLoop", () => {
  it("hands every line in order, one at a time, and says stdin closed at EOF", async () => {
    const input = new PassThrough();
    const seen: string[] = [];
    let running = 0;
    const loop = runStdioReadLoop({
      input,
      maxLineBytes: 8,
      logger: captureLogger().logger,
      stopping: () => false,
      handle: async (item: LineItem) => {
        assert.equal(++running, 1, "one line at a time");
        seen.push(item.kind === "line" ? item.text : `overflow ${item.bytes}`);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
      },
    });
    input.end("a\nbb\nthis line is too long\nc\n");
    assert.equal(await loop, "stdin closed");
    assert.deepEqual(seen, ["a", "bb", "overflow 21", "c"]);
  });

  it("waits for admit before reading each line, and handles nothing once stopping", async () => {
    const input = new PassThrough();
    const seen: string[] = [];
    const admits: Array<() => void> = [];
    let stopping = false;
    const loop = runStdioReadLoop({
      input,
      maxLineBytes: 64,
      logger: captureLogger().logger,
      stopping: () => stopping,
      admit: () => new Promise<void>((resolve) => admits.push(resolve)),
      handle: async (item) => void seen.push(item.kind === "line" ? item.text : ""),
    });
    input.write("one\ntwo\n");
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, [], "nothing is handled before admit");
    admits.shift()!();
    while (admits.length === 0) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen, ["one"]);
    stopping = true;
    admits.shift()!();
    assert.equal(await loop, null);
    assert.deepEqual(seen, ["one"]);
  });

  it("a failing handler ends the loop as a stdin error, logged", async () => {
    const input = new PassThrough();
    const log = captureLogger();
    const loop = runStdioReadLoop({ input, maxLineBytes: 64, logger: log.logger, stopping: () => false, handle: async () => Promise.reject(new Error("boom")) });
    input.write("x\n");
    assert.equal(await loop, "stdin error");
    assert.ok(log.records().some((record) => record.msg === "reading stdin failed"));
  });
});

describe("shutdown sequence", () => {
  it("work that settles within the grace period is not aborted", async () => {
    let aborted = false;
    const finished = await settleInFlight({ settled: () => Promise.resolve(), abortAll: () => (aborted = true), describe: () => ({}) }, 1000, captureLogger().logger, "cancelling");
    assert.equal(finished, true);
    assert.equal(aborted, false);
  });

  it("after the grace period everything is aborted (with the reason) and gets to settle", async () => {
    let release: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (release = resolve));
    const reasons: string[] = [];
    const log = captureLogger();
    const finished = await settleInFlight(
      {
        settled: () => done,
        abortAll: (reason) => {
          reasons.push(reason);
          release();
        },
        describe: () => ({ pending: [7] }),
      },
      10,
      log.logger,
      "cancelling requests still in flight at shutdown",
    );
    assert.equal(finished, false);
    assert.deepEqual(reasons, ["shutting down"]);
    const warned = log.records().find((record) => record.msg === "cancelling requests still in flight at shutdown");
    assert.deepEqual(warned?.pending, [7]);
  });

  it("flush closes the output and warns when it could not drain in time", async () => {
    const log = captureLogger();
    const closes: number[] = [];
    const output = (drained: boolean): LineOutput => ({ push: async () => undefined, close: async (ms) => (closes.push(ms), drained) });
    assert.equal(await flushOutput(output(true), 50, log.logger), true);
    assert.equal(await flushOutput(output(false), 60, log.logger, () => ({ queued: 3 })), false);
    assert.deepEqual(closes, [50, 60]);
    const warnings = log.records().filter((record) => record.msg === "output not fully flushed before the timeout");
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.queued, 3);
  });
});
