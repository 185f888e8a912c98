// The stop paths of the serve commands that do not need a real host: SIGBREAK counted as SIGTERM
// on Windows (with an injected platform), and the stdin lifeline on a stream.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { shutdownOnSignals } from "../../src/app/process/shutdown-signals.js";
import { latchSignals } from "../../src/app/process/signal-latch.js";
import { onStdinEof } from "../../src/app/process/stdin-lifeline.js";
import { captureLogger } from "../helpers/capture-logger.js";

test("on win32 SIGBREAK stops the server gracefully, as SIGTERM does; a second signal exits at once", () => {
  const exits: number[] = [];
  const stop = shutdownOnSignals(captureLogger().logger, (code) => exits.push(code), undefined, "win32");
  try {
    process.emit("SIGBREAK", "SIGBREAK");
    assert.equal(stop.signal.aborted, true);
    assert.equal(stop.signal.reason, "SIGBREAK received");
    assert.deepEqual(exits, []);
    process.emit("SIGBREAK", "SIGBREAK");
    assert.deepEqual(exits, [1]);
  } finally {
    stop.dispose();
  }
  assert.equal(process.listenerCount("SIGBREAK"), 0);
});

test("on linux SIGBREAK is not listened to (it does not exist there)", () => {
  const stop = shutdownOnSignals(captureLogger().logger, () => undefined, undefined, "linux");
  try {
    assert.equal(process.listenerCount("SIGBREAK"), 0);
  } finally {
    stop.dispose();
  }
});

test("the start-up latch holds SIGBREAK on win32 and hands it over", () => {
  const target = new EventEmitter();
  const latch = latchSignals(target as unknown as NodeJS.Process, "win32");
  target.emit("SIGBREAK", "SIGBREAK");
  assert.equal(latch.release(), "SIGBREAK");
  assert.equal(target.listenerCount("SIGBREAK"), 0);
});

test("requestStop stops once, without forcing an exit", () => {
  const exits: number[] = [];
  const stop = shutdownOnSignals(captureLogger().logger, (code) => exits.push(code), undefined, "linux");
  try {
    stop.requestStop("stdin closed");
    stop.requestStop("stdin closed");
    assert.equal(stop.signal.reason, "stdin closed");
    assert.deepEqual(exits, []);
  } finally {
    stop.dispose();
  }
});

test("the stdin lifeline: what arrives is discarded, the end fires once, the remover lets go of the stream", async () => {
  const stdin = new PassThrough();
  let fired = 0;
  const dispose = onStdinEof(stdin, () => fired++);
  stdin.write("anything a host writes\n");
  stdin.end();
  await new Promise((resolve) => stdin.once("close", resolve));
  assert.equal(fired, 1);
  dispose();
  assert.equal(stdin.destroyed, true);
  assert.equal(stdin.listenerCount("data"), 0);
});
