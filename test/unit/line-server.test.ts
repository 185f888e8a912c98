import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import type { LineOutput } from "../../src/serving/line-output.js";
import { runLineServer, type LineDoor, type LineServerControl } from "../../src/serving/line-server.js";
import { captureLogger } from "../helpers/capture-logger.js";

const limits = { maxLineBytes: 64, flushTimeoutMs: 200, shutdownGraceMs: 50 };

/**
 * A made-up front door as one plug-in: it answers each line with its upper case after a tick,
 * except "hang", which runs until aborted, and "stop", which stops the server as a method would.
 * Every step it sees is recorded in order.
 */
function echoDoor(control: LineServerControl, steps: string[]): LineDoor {
  const written: string[] = [];
  const running = new Set<Promise<void>>();
  const aborts = new Set<() => void>();
  const output: LineOutput = {
    push: async (line) => void written.push(line),
    close: async () => (steps.push(`flush ${written.join(",")}`), true),
  };
  return {
    name: "echo server",
    output,
    handle: async (item) => {
      if (item.kind === "overflow") return void (await output.push(`too long ${item.bytes}`));
      if (item.text === "stop") return control.requestStop("asked to stop");
      const work = new Promise<void>((resolve) => {
        if (item.text === "hang") aborts.add(() => resolve(void written.push("hang cancelled")));
        else setImmediate(() => resolve(void written.push(item.text.toUpperCase())));
      });
      running.add(work);
      void work.finally(() => running.delete(work));
    },
    work: {
      settled: async () => void (await Promise.all([...running])),
      abortAll: (reason) => {
        steps.push(`abort ${reason}`);
        for (const abort of aborts) abort();
      },
      describe: () => ({ running: running.size }),
    },
    cancelMessage: "cancelling echoes",
    close: async () => void steps.push("close"),
  };
}

describe("runLineServer (a front door as one plug-in)", () => {
  it("stdin EOF: every line is answered, work in flight finishes, then close and flush", async () => {
    const input = new PassThrough();
    const steps: string[] = [];
    const done = runLineServer({ input, logger: captureLogger().logger, limits }, (control) => echoDoor(control, steps));
    input.end("x".repeat(100) + "\na\nb\n");
    const result = await done;
    assert.deepEqual(result, { exitCode: 0, reason: "stdin closed", flushed: true });
    assert.deepEqual(steps, ["close", "flush too long 100,A,B"]);
  });

  it("the door stops the server; a line read after that is not handled", async () => {
    const input = new PassThrough();
    const steps: string[] = [];
    const done = runLineServer({ input, logger: captureLogger().logger, limits }, (control) => echoDoor(control, steps));
    input.write("a\nstop\nb\n");
    const result = await done;
    assert.equal(result.reason, "asked to stop");
    assert.deepEqual(steps, ["close", "flush A"]);
  });

  it("the abort signal stops it; work past the grace period is aborted (logged) before close and flush", async () => {
    const input = new PassThrough();
    const steps: string[] = [];
    const log = captureLogger();
    const controller = new AbortController();
    const done = runLineServer({ input, logger: log.logger, limits, signal: controller.signal }, (control) => echoDoor(control, steps));
    input.write("hang\n");
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort("SIGTERM received");
    const result = await done;
    assert.equal(result.reason, "SIGTERM received");
    assert.deepEqual(steps, ["abort shutting down", "close", "flush hang cancelled"]);
    const records = log.records();
    assert.deepEqual(records.find((record) => record.msg === "echo server stopping")?.running, 1);
    assert.ok(records.some((record) => record.msg === "cancelling echoes"));
  });
});
