import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Inbound } from "../../src/protocol/dialect.js";
import { parseJsonRpcLine } from "../../src/protocol/jsonrpc/jsonrpc-envelope.js";
import { parseEnvelope } from "../../src/protocol/v1/envelope.js";
import { fuzzParams } from "../helpers/fuzz-runs.js";

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isId = (value: unknown): boolean => typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
const parses = (line: string): boolean => {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
};

// Values an attacker or a confused client would send as id, method or params.
const hostileScalar = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", "__proto__", "constructor", "../../etc/passwd", "\u0000", "\ud800", "ping", "chat", "cancel", "shutdown"),
  fc.integer(),
  fc.double(),
  fc.constantFrom(1e308, -0, Number.MAX_SAFE_INTEGER + 2, 2 ** 70),
  fc.boolean(),
  fc.constant(null),
);
const hostileValue = fc.oneof(hostileScalar, fc.jsonValue({ maxDepth: 4 }), fc.array(hostileScalar, { maxLength: 3 }), fc.dictionary(fc.string(), hostileScalar, { maxKeys: 3 }));

/** An object shaped like a request, each field present or absent, valid or not. */
const requestLike = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant("2.0"), hostileValue),
    id: hostileValue,
    method: fc.oneof(fc.constantFrom("ping", "chat", "cancel", "shutdown", "sessions.list", "nope"), hostileValue),
    params: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), hostileValue),
    extra: hostileValue,
  },
  { requiredKeys: [] },
);

// Lines: arbitrary text, JSON of any value, request-like objects, batches, and deep nesting.
// Deep enough to stress a recursive parser, shallow enough for assert.deepEqual's own recursion.
const deep = fc.integer({ min: 1, max: 2000 }).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}`);
const deepObject = fc.integer({ min: 1, max: 1000 }).map((depth) => `{"id":1,"method":"ping","params":${'{"a":'.repeat(depth)}1${"}".repeat(depth)}}`);
const line = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.jsonValue({ maxDepth: 5 }).map((value) => JSON.stringify(value)),
  requestLike.map((value) => JSON.stringify(value)),
  fc.array(requestLike, { maxLength: 5 }).map((value) => JSON.stringify(value)),
  requestLike.map((value) => JSON.stringify(value).slice(0, -1)),
  deep,
  deepObject,
);

function checkJsonRpcFrame(frame: unknown): void {
  assert.ok(isPlainObject(frame));
  assert.equal(frame.jsonrpc, "2.0");
  assert.ok(frame.id === null || isId(frame.id), `frame id ${String(frame.id)}`);
  assert.ok(isPlainObject(frame.error));
  assert.ok(Number.isInteger(frame.error.code));
  assert.ok(typeof frame.error.message === "string" && frame.error.message.length > 0);
  // A frame must survive the wire: JSON and back gives the same thing.
  assert.deepEqual(JSON.parse(JSON.stringify(frame)), frame);
}

function checkInbound(item: Inbound, entry: unknown): void {
  if (item.kind === "reject") {
    assert.ok(item.reason.length > 0);
    assert.notEqual(item.frame, null, "every rejected entry is answered (the server cannot tell a bad notification)");
    checkJsonRpcFrame(item.frame);
    return;
  }
  assert.ok(isPlainObject(entry));
  assert.equal(entry.jsonrpc, "2.0");
  assert.equal(item.method, entry.method);
  assert.ok(typeof item.method === "string" && item.method.length > 0);
  assert.equal(item.notification, !Object.hasOwn(entry, "id"));
  assert.ok(item.id === null || isId(item.id));
  assert.ok(typeof item.params === "object" && item.params !== null);
}

describe("v1 envelope (fuzzed)", () => {
  it("never throws; a request has a valid id, a method and object params, else a precise error", () => {
    fc.assert(
      fc.property(line, (text) => {
        const envelope = parseEnvelope(text);
        if (envelope.kind === "invalid") {
          assert.equal(envelope.code === "invalid_json", !parses(text));
          assert.ok(envelope.message.length > 0);
          assert.ok(envelope.id === null || isId(envelope.id));
          return;
        }
        const value = JSON.parse(text) as Record<string, unknown>;
        assert.ok(isId(envelope.request.id));
        assert.equal(envelope.request.id, value.id);
        assert.equal(envelope.request.method, value.method);
        assert.ok(isPlainObject(envelope.request.params));
        assert.deepEqual(envelope.request.params, value.params ?? {});
      }),
      fuzzParams(1000),
    );
  });

  it("a well-formed request always parses to itself", () => {
    const id = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
    fc.assert(
      fc.property(id, fc.string({ minLength: 1 }), fc.option(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), { nil: undefined }), (rid, method, params) => {
        const wire = JSON.stringify({ id: rid, method, ...(params === undefined ? {} : { params }) });
        const envelope = parseEnvelope(wire);
        assert.equal(envelope.kind, "request");
        if (envelope.kind !== "request") return;
        // JSON turns -0 into 0: compare with what actually went over the wire.
        assert.deepEqual(envelope.request, JSON.parse(JSON.stringify({ id: rid, method, params: params ?? {} })));
      }),
      fuzzParams(500),
    );
  });
});

describe("deep nesting", () => {
  it("a request whose params nest 100,000 levels deep parses (V8's JSON.parse is not recursive) in both dialects", () => {
    const depth = 100_000;
    const params = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    const v1 = parseEnvelope(`{"id":1,"method":"ping","params":${params}}`);
    assert.equal(v1.kind, "request");
    const rpc = parseJsonRpcLine(`{"jsonrpc":"2.0","id":1,"method":"ping","params":${params}}`, 8);
    assert.ok(!rpc.batch && rpc.item.kind === "call");
    const array = parseEnvelope(`${"[".repeat(depth)}${"]".repeat(depth)}`);
    assert.ok(array.kind === "invalid" && array.code === "invalid_request");
  });
});

describe("JSON-RPC envelope (fuzzed)", () => {
  it("never throws; every entry is a call or an answered reject with a well-formed error frame", () => {
    fc.assert(
      fc.property(line, fc.integer({ min: 1, max: 8 }), (text, maxBatch) => {
        const parsed = parseJsonRpcLine(text, maxBatch);
        if (!parses(text)) {
          assert.equal(parsed.batch, false);
          assert.ok(!parsed.batch && parsed.item.kind === "reject");
          if (!parsed.batch && parsed.item.kind === "reject") {
            checkJsonRpcFrame(parsed.item.frame);
            assert.equal((parsed.item.frame as { error: { code: number } }).error.code, -32700);
          }
          return;
        }
        const value: unknown = JSON.parse(text);
        if (parsed.batch) {
          assert.ok(Array.isArray(value) && value.length > 0 && value.length <= maxBatch);
          assert.equal(parsed.items.length, value.length);
          parsed.items.forEach((item, i) => checkInbound(item, value[i]));
        } else if (Array.isArray(value)) {
          assert.equal(parsed.item.kind, "reject", "an empty or too-long batch is one reject");
          checkInbound(parsed.item, value);
        } else {
          checkInbound(parsed.item, value);
        }
      }),
      fuzzParams(1000),
    );
  });
});
