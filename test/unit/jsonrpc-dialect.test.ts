import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { z } from "zod";
import { parseJsonRpcLine } from "../../src/protocol/jsonrpc/jsonrpc-envelope.js";
import { jsonRpcDialect } from "../../src/protocol/jsonrpc/jsonrpc-dialect.js";
import { exceptionName, jsonRpcCodeOf, jsonRpcErrorFrame } from "../../src/protocol/jsonrpc/jsonrpc-frames.js";
import { defineMethod, type MethodDefinition } from "../../src/protocol/method.js";
import { runStdioServer } from "../../src/protocol/stdio-server.js";
import { ERROR_CODES, RuntimeError } from "../../src/shared/runtime-error.js";
import { captureLogger } from "../helpers/capture-logger.js";

type Json = Record<string, unknown>;

/** The server in process with the JSON-RPC dialect; resolves with every stdout value once stdin ends. */
async function exchange(lines: string[], methods: Array<[string, MethodDefinition<never>]>): Promise<unknown[]> {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = "";
  output.setEncoding("utf8");
  output.on("data", (chunk: string) => (text += chunk));
  const { logger } = captureLogger();
  const done = runStdioServer({
    input,
    output,
    logger,
    dialect: jsonRpcDialect(4),
    limits: { maxLineBytes: 1 << 16, writerQueueSize: 100, flushTimeoutMs: 500, shutdownGraceMs: 2000, maxInFlight: 16 },
    methods: () => new Map(methods),
  });
  input.end(lines.map((line) => `${line}\n`).join(""));
  assert.equal((await done).exitCode, 0);
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as unknown);
}

const ping = defineMethod({ params: z.object({}).loose(), result: async () => z.unknown(), handle: async () => ({ status: "ok" }) });

describe("JSON-RPC envelope", () => {
  it("tells requests, notifications and invalid entries apart", () => {
    const one = (text: string): Json => {
      const parsed = parseJsonRpcLine(text, 4);
      assert.equal(parsed.batch, false);
      return parsed.batch ? {} : (parsed.item as unknown as Json);
    };
    assert.deepEqual(one('{"jsonrpc":"2.0","id":1,"method":"m"}'), { kind: "call", id: 1, method: "m", params: {}, notification: false });
    assert.deepEqual(one('{"jsonrpc":"2.0","method":"m","params":[1]}'), { kind: "call", id: null, method: "m", params: [1], notification: true });
    assert.equal(one('{"jsonrpc":"2.0","id":null,"method":"m"}').notification, false, "id null is a request (answered with id null)");
    for (const bad of ['{"id":1,"method":"m"}', '{"jsonrpc":"2.0","id":1,"method":""}', '{"jsonrpc":"2.0","id":1,"method":"m","params":3}', '{"jsonrpc":"2.0","id":true,"method":"m"}', "null", "5"]) {
      const item = one(bad);
      assert.equal(item.kind, "reject", bad);
      assert.equal(((item.frame as Json).error as Json).code, -32600, bad);
    }
    assert.equal(((one('{"jsonrpc":"2.0","id":true,"method":"m"}').frame as Json).id), null, "an unreadable id is answered as null");
    assert.equal((((one("{nope").frame as Json).error) as Json).code, -32700);
    const tooMany = one(JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "m" }))));
    assert.match(String(((tooMany.frame as Json).error as Json).message), /batch of 5 entries exceeds the limit of 4/);
  });

  it("gives every error code a JSON-RPC number: the standard five, and the server range for the rest", () => {
    const numbers = ERROR_CODES.map(jsonRpcCodeOf);
    assert.equal(new Set(numbers).size, numbers.length, "no two codes share a number");
    for (const code of ERROR_CODES) {
      const n = jsonRpcCodeOf(code);
      assert.ok([-32700, -32601, -32602, -32603].includes(n) || (n <= -32000 && n >= -32099), `${code}: ${n}`);
    }
    const frame = jsonRpcErrorFrame(3, new RuntimeError("model_missing", "no file", { details: { path: "/x", code: "ignored" } }), null) as Json;
    assert.deepEqual(frame, { jsonrpc: "2.0", id: 3, error: { code: -32004, message: "no file", data: { code: "model_missing", path: "/x" } } });
    assert.equal(exceptionName(new TypeError("x")), "TypeError");
    assert.equal(exceptionName(new RuntimeError("internal_error", "x", { cause: new RangeError("y") })), "RangeError");
  });
});

describe("runStdioServer with the JSON-RPC dialect", () => {
  it("answers a handler's unexpected throw with -32603 naming the exception class, and goes on", async () => {
    const boom = defineMethod({
      params: z.object({}).loose(), result: async () => z.unknown(),
      handle: async () => {
        throw new TypeError("secret detail");
      },
    });
    const out = (await exchange(['{"jsonrpc":"2.0","id":1,"method":"boom"}', '{"jsonrpc":"2.0","id":2,"method":"ping"}'], [["boom", boom], ["ping", ping]])) as Json[];
    const error = out.find((m) => m.id === 1)?.error as Json;
    assert.equal(error.code, -32603);
    assert.deepEqual(error.data, { code: "internal_error", exception: "TypeError" });
    assert.doesNotMatch(String(error.message), /secret/);
    assert.deepEqual(out.find((m) => m.id === 2), { jsonrpc: "2.0", id: 2, result: { status: "ok" } });
  });

  it("runs a notification without answering it or sending its events; a batch's events stream before its array", async () => {
    const calls: unknown[] = [];
    const streamer = defineMethod({
      params: z.object({ n: z.number() }).loose(), result: async () => z.unknown(),
      handle: async (params, context) => {
        calls.push(params.n);
        context.emit("llm_chunk", { step: 0, delta: `d${params.n}` });
        return { n: params.n };
      },
    });
    const out = await exchange(
      ['{"jsonrpc":"2.0","method":"stream","params":{"n":1}}', '[{"jsonrpc":"2.0","id":"a","method":"stream","params":{"n":2}},{"jsonrpc":"2.0","id":"a","method":"stream","params":{"n":3}}]'],
      [["stream", streamer]],
    );
    assert.deepEqual(calls, [1, 2], "the notification ran; the duplicate id inside the batch did not");
    assert.deepEqual(out, [
      { jsonrpc: "2.0", method: "$/event", params: { request_id: "a", event: "llm_chunk", step: 0, delta: "d2" } },
      [
        { jsonrpc: "2.0", id: "a", result: { n: 2 } },
        { jsonrpc: "2.0", id: "a", error: { code: -32600, message: 'Invalid Request: a request with id "a" is already in flight; ids must be unique among in-flight requests', data: { code: "invalid_request" } } },
      ],
    ]);
  });
});
