import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseEnvelope } from "../../src/protocol/v1/envelope.js";

describe("parseEnvelope", () => {
  it("accepts a request and defaults params to {}", () => {
    assert.deepEqual(parseEnvelope('{"id":"1","method":"ping"}'), { kind: "request", request: { id: "1", method: "ping", params: {} } });
  });

  it("keeps a numeric id a number", () => {
    const envelope = parseEnvelope('{"id":7,"method":"ping","params":{"x":1}}');
    assert.deepEqual(envelope, { kind: "request", request: { id: 7, method: "ping", params: { x: 1 } } });
  });

  it("answers invalid_json with a null id for a line that is not JSON", () => {
    const envelope = parseEnvelope('{"id":1,"method":');
    assert.equal(envelope.kind, "invalid");
    assert.equal(envelope.kind === "invalid" && envelope.code, "invalid_json");
    assert.equal(envelope.kind === "invalid" && envelope.id, null);
  });

  const invalid: Array<[string, string, string | number | null]> = [
    ["an array", "[1,2]", null],
    ["a string", '"ping"', null],
    ["null", "null", null],
    ["a number", "42", null],
    ["missing id", '{"method":"ping"}', null],
    ["an object id", '{"id":{"a":1},"method":"ping"}', null],
    ["a boolean id", '{"id":true,"method":"ping"}', null],
    ["missing method", '{"id":"a"}', "a"],
    ["a numeric method", '{"id":3,"method":5}', 3],
    ["an empty method", '{"id":3,"method":""}', 3],
    ["array params", '{"id":"p","method":"ping","params":[1]}', "p"],
    ["string params", '{"id":"p","method":"ping","params":"x"}', "p"],
    ["null params", '{"id":"p","method":"ping","params":null}', "p"],
  ];
  for (const [name, line, id] of invalid) {
    it(`answers invalid_request for ${name}, with the id when readable`, () => {
      const envelope = parseEnvelope(line);
      assert.equal(envelope.kind, "invalid");
      if (envelope.kind !== "invalid") return;
      assert.equal(envelope.code, "invalid_request");
      assert.equal(envelope.id, id);
      assert.ok(envelope.message.length > 0);
    });
  }
});
