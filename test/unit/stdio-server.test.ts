import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { z } from "zod";
import { delay } from "../../src/shared/abort.js";
import { defineMethod, type MethodDefinition, type MethodTable } from "../../src/protocol/method.js";
import { cancelMethod } from "../../src/protocol/methods/cancel.js";
import { pingMethod } from "../../src/protocol/methods/ping.js";
import { shutdownMethod } from "../../src/protocol/methods/shutdown.js";
import { runStdioServer, type StdioControl, type StdioServerResult } from "../../src/protocol/stdio-server.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { waitUntil } from "../helpers/wait-until.js";

interface Harness {
  input: PassThrough;
  lines: () => Array<Record<string, unknown>>;
  waitFor: (count: number) => Promise<void>;
  done: Promise<StdioServerResult>;
  records: () => Array<Record<string, unknown>>;
}

/** The server in process with injected streams and a method table built for the test. */
function start(build: (control: StdioControl) => Array<[string, MethodDefinition<never>]>, limits: Partial<Parameters<typeof runStdioServer>[0]["limits"]> = {}, signal?: AbortSignal): Harness {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = "";
  output.setEncoding("utf8");
  output.on("data", (chunk: string) => (text += chunk));
  const { logger, records } = captureLogger();
  const done = runStdioServer({
    input,
    output,
    logger,
    limits: { maxLineBytes: 1 << 20, writerQueueSize: 100, flushTimeoutMs: 500, shutdownGraceMs: 200, maxInFlight: 16, ...limits },
    methods: (control): MethodTable => new Map(build(control)),
    ...(signal ? { signal } : {}),
  });
  const lines = (): Array<Record<string, unknown>> => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>);
  // Re-checked on each write the server makes; the timeout only bounds a hang.
  const waitFor = (count: number): Promise<void> => waitUntil(() => lines().length >= count, [{ emitter: output, event: "data" }], 10_000, () => `expected ${count} lines, got ${text}`);
  return { input, lines, waitFor, done, records };
}

const ping = defineMethod({ params: z.object({}).loose(), result: async () => z.unknown(), handle: async () => ({ status: "ok" }) });

describe("runStdioServer", () => {
  it("turns an unexpected throw into internal_error with a safe message, logs the stack, and goes on", async () => {
    const boom = defineMethod({
      params: z.object({}).loose(), result: async () => z.unknown(),
      handle: async () => {
        throw new Error("secret internal detail /etc/passwd");
      },
    });
    const h = start(() => [["boom", boom], ["ping", ping]]);
    h.input.write('{"id":1,"method":"boom"}\n{"id":2,"method":"ping"}\n');
    await h.waitFor(2);
    h.input.end();
    await h.done;
    const error = h.lines().find((l) => l.id === 1);
    assert.equal(error?.type, "error");
    assert.equal(error?.code, "internal_error");
    assert.doesNotMatch(String(error?.message), /secret/);
    assert.equal(h.lines().find((l) => l.id === 2)?.type, "result");
    const logged = h.records().find((r) => r.msg === "method failed unexpectedly");
    assert.match(JSON.stringify(logged), /secret internal detail/);
    assert.equal(logged?.req_id, 1, "the per-request child logger carries the id");
  });

  it("handles requests concurrently: a slow method does not block ping", async () => {
    let release: () => void = () => undefined;
    const slow = defineMethod({ params: z.object({}).loose(), result: async () => z.unknown(), handle: () => new Promise((resolve) => (release = () => resolve({ slow: true }))) });
    const h = start(() => [["slow", slow], ["ping", ping]]);
    h.input.write('{"id":"s","method":"slow"}\n{"id":"p","method":"ping"}\n');
    await h.waitFor(1);
    assert.deepEqual(h.lines()[0], { id: "p", type: "result", result: { status: "ok" } });
    release();
    await h.waitFor(2);
    assert.deepEqual(h.lines()[1], { id: "s", type: "result", result: { slow: true } });
    h.input.end();
    assert.equal((await h.done).exitCode, 0);
  });

  it("streams events before the result, with the request id", async () => {
    const streamer = defineMethod({
      params: z.object({}).loose(), result: async () => z.unknown(),
      handle: async (_params, context) => {
        context.emit("llm_chunk", { step: 0, delta: "Hel" });
        context.emit("llm_chunk", { step: 0, delta: "lo" });
        return { response: "Hello" };
      },
    });
    const h = start(() => [["stream", streamer]]);
    h.input.end('{"id":9,"method":"stream"}\n');
    await h.done;
    assert.match(JSON.stringify(h.lines()[0]), /^\{"id":9,"type":"event","event":"llm_chunk","step":0,"delta":"Hel"\}$/);
    assert.deepEqual(h.lines(), [
      { id: 9, type: "event", event: "llm_chunk", step: 0, delta: "Hel" },
      { id: 9, type: "event", event: "llm_chunk", step: 0, delta: "lo" },
      { id: 9, type: "result", result: { response: "Hello" } },
    ]);
  });

  it("rejects a second request with an id that is still in flight", async () => {
    let release: () => void = () => undefined;
    const slow = defineMethod({ params: z.object({}).loose(), result: async () => z.unknown(), handle: () => new Promise((resolve) => (release = () => resolve("done"))) });
    const h = start(() => [["slow", slow]]);
    h.input.write('{"id":"dup","method":"slow"}\n{"id":"dup","method":"slow"}\n');
    await h.waitFor(1);
    assert.equal(h.lines()[0]?.code, "invalid_request");
    release();
    h.input.end();
    await h.done;
    assert.equal(h.lines()[1]?.result, "done");
  });

  it("at the in-flight limit stdin is still read: ping, cancel and shutdown are answered, other calls get busy", async () => {
    const stuck = defineMethod({
      params: z.object({}).loose(),
      result: async () => z.unknown(),
      handle: (_params, context) => new Promise((_resolve, reject) => context.signal.addEventListener("abort", () => reject(new Error("aborted")))),
    });
    // Named chat: `cancel` reaches chats only.
    const h = start((control) => [["chat", stuck], ["ping", pingMethod], ["cancel", cancelMethod(control)], ["shutdown", shutdownMethod(control)]], { maxInFlight: 4 });
    h.input.write([1, 2, 3, 4, 5].map((n) => `{"id":${n},"method":"chat"}\n`).join(""));
    await h.waitFor(1);
    assert.deepEqual(h.lines()[0], {
      id: 5,
      type: "error",
      code: "busy",
      message: "Too many requests in flight (the limit is 4): wait for answers or cancel some, then send it again",
      details: { max_in_flight: 4 },
    });
    h.input.write('{"id":"p","method":"ping"}\n{"id":"c","method":"cancel","params":{"request_id":2}}\n');
    await h.waitFor(4);
    assert.deepEqual(h.lines().slice(1).map((l) => [l.id, l.type, l.code ?? (l.result as { status?: string }).status]).sort(), [
      [2, "error", "cancelled"],
      ["c", "result", "ok"],
      ["p", "result", "ok"],
    ]);
    // One slot is free again: an ordinary call is taken.
    h.input.write('{"id":6,"method":"chat"}\n{"id":7,"method":"chat"}\n{"id":"s","method":"shutdown"}\n');
    const result = await h.done;
    assert.equal(result.exitCode, 0);
    const byId = new Map(h.lines().map((l) => [l.id, l.code ?? (l.result as { status?: string }).status]));
    assert.equal(byId.get(7), "busy");
    assert.equal(byId.get("s"), "ok");
    for (const id of [1, 3, 4, 6]) assert.equal(byId.get(id), "cancelled", `request ${id} was cancelled at shutdown`);
  });

  it("at shutdown waits for in-flight work, then cancels what outlives the grace period", async () => {
    const stuck = defineMethod({
      params: z.object({}).loose(), result: async () => z.unknown(),
      handle: (_params, context) => new Promise((_resolve, reject) => context.signal.addEventListener("abort", () => reject(new Error("aborted")))),
    });
    const quick = defineMethod({ params: z.object({}).loose(), result: async () => z.unknown(), handle: async () => {
      // Work that takes a moment and finishes within the grace period (a duration, not a synchronization).
      await delay(50);
      return "quick";
    } });
    const h = start(() => [["stuck", stuck], ["quick", quick]], { shutdownGraceMs: 300 });
    h.input.end('{"id":"a","method":"stuck"}\n{"id":"b","method":"quick"}\n');
    const result = await h.done;
    assert.equal(result.exitCode, 0);
    assert.deepEqual(h.lines().map((l) => [l.id, l.type, l.code ?? l.result]).sort(), [
      ["a", "error", "cancelled"],
      ["b", "result", "quick"],
    ]);
  });

  it("the shutdown signal (SIGTERM) stops the server like shutdown", async () => {
    const controller = new AbortController();
    const h = start(() => [["ping", ping]], {}, controller.signal);
    h.input.write('{"id":1,"method":"ping"}\n');
    await h.waitFor(1);
    controller.abort("SIGTERM received");
    const result = await h.done;
    assert.equal(result.reason, "SIGTERM received");
    assert.equal(result.flushed, true);
  });

  it("answers a result that cannot be serialised with internal_error", async () => {
    const bad = defineMethod({ params: z.object({}).loose(), result: async () => z.unknown(), handle: async () => ({ n: 10n }) });
    const h = start(() => [["bad", bad]]);
    h.input.end('{"id":"b","method":"bad"}\n');
    await h.done;
    assert.equal(h.lines()[0]?.code, "internal_error");
  });
});
