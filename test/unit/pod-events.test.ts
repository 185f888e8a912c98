import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PodEventMapper, podErrorFor } from "../../src/pod/pod-events.js";
import { LineSplitter } from "../../src/shared/line-splitter.js";
import { parsePodRequest } from "../../src/pod/pod-request.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";

describe("PodEventMapper: AgentEvents -> Pod events", () => {
  it("closes a thinking block when text starts, and sends each step's whole text at llm_done", () => {
    const mapper = new PodEventMapper(2);
    const out = [
      { event: "llm_start", step: 0 },
      { event: "thinking_chunk", step: 0, delta: "hm" },
      { event: "thinking_chunk", step: 0, delta: "m" },
      { event: "llm_chunk", step: 0, delta: "Hi" },
      { event: "llm_chunk", step: 0, delta: "!" },
      { event: "usage", step: 0, input_tokens: 3, output_tokens: 4 },
      { event: "llm_done", step: 0 },
      { event: "final", step: 0, response: "Hi!" },
    ].flatMap((event) => mapper.map(event as Parameters<PodEventMapper["map"]>[0]));
    assert.deepEqual(out, [
      { event: "thinking_delta", data: { text: "hm" } },
      { event: "thinking_delta", data: { text: "m" } },
      { event: "thinking_done", data: { text: "hmm" } },
      { event: "text_delta", data: { text: "Hi" } },
      { event: "text_delta", data: { text: "!" } },
      { event: "usage", data: { input_tokens: 3, output_tokens: 4 } },
      { event: "text_done", data: { text: "Hi!" } },
    ]);
  });

  it("gives calls ids per turn; an invalid call is announced with its error result; a failed tool is also tool_error", () => {
    const mapper = new PodEventMapper(3);
    const out = [
      { event: "tool_done", step: 0, tool: "nope", status: "error", preview: "invalid tool call: unknown", retryable: true, ms: 0 },
      { event: "tool_start", step: 1, tool: "echo", args: { message: "x" } },
      { event: "tool_done", step: 1, tool: "echo", status: "timeout", preview: "timed out", retryable: true, ms: 9 },
    ].flatMap((event) => mapper.map(event as Parameters<PodEventMapper["map"]>[0]));
    assert.deepEqual(out, [
      { event: "tool_call_start", data: { id: "call_3_1", name: "nope" } },
      { event: "tool_result", data: { id: "call_3_1", output: "invalid tool call: unknown", is_error: true } },
      { event: "tool_call_start", data: { id: "call_3_2", name: "echo" } },
      { event: "tool_call_args_delta", data: { id: "call_3_2", json: '{"message":"x"}' } },
      { event: "tool_call_done", data: { id: "call_3_2", name: "echo", arguments: '{"message":"x"}' } },
      { event: "tool_result", data: { id: "call_3_2", output: "timed out", is_error: true } },
      { event: "error", data: { code: "tool_error", message: "echo: timed out" } },
    ]);
  });

  it("a resumed turn reuses the paused call's id; a declined one gets an error result", () => {
    const pending = { id: "call_1_1", name: "echo", arguments: "{}" };
    const approved = new PodEventMapper(1, pending, 1).map({ event: "tool_start", step: 0, tool: "echo", args: {} });
    assert.deepEqual(approved, []);
    const declined = new PodEventMapper(1, pending, 1).map({ event: "tool_done", step: 0, tool: "echo", status: "denied", preview: "declined by the user", retryable: false, ms: 0 });
    assert.deepEqual(declined, [{ event: "tool_result", data: { id: "call_1_1", output: "declined by the user", is_error: true } }]);
    assert.deepEqual(new PodEventMapper(1).map({ event: "loop_abort", step: 7, reason: "max_steps" })[0]?.data, {
      code: "internal", message: "the turn stopped early: the step limit (app.max_steps) was reached", reason: "max_steps",
    });
  });

  it("maps RuntimeError codes to the seed's codes", () => {
    assert.equal(podErrorFor(new RuntimeError("engine_unavailable", "down")).code, "provider_error");
    assert.equal(podErrorFor(new RuntimeError("model_missing", "no file")).code, "provider_error");
    assert.deepEqual(podErrorFor(new Error("boom")), { code: "internal", message: "Internal error" });
  });
});

describe("pod requests and lines", () => {
  it("parses the five methods and refuses the rest with a message", () => {
    assert.deepEqual(parsePodRequest('{"method":"run","params":{"input":"hi"}}'), { ok: true, request: { method: "run", input: "hi" } });
    assert.deepEqual(parsePodRequest('{"method":"get_history"}'), { ok: true, request: { method: "get_history" } });
    assert.equal(parsePodRequest("[1]").ok, false);
    assert.equal(parsePodRequest('{"method":"run","params":{"input":""}}').ok, false);
    assert.deepEqual(parsePodRequest('{"method":"x"}'), { ok: false, message: 'unknown method "x"; supported: run, resume, cancel, get_status, get_history' });
  });

  it("splits capped lines across chunks, keeps split UTF-8, reports an over-long line once", () => {
    const splitter = new LineSplitter(8);
    const euro = Buffer.from("€");
    assert.deepEqual(splitter.push(Buffer.concat([Buffer.from("a"), euro.subarray(0, 1)])), []);
    assert.deepEqual(splitter.push(Buffer.concat([euro.subarray(1), Buffer.from("\r\n\n0123456789")])), [{ kind: "line", text: "a€" }]);
    assert.deepEqual(splitter.push(Buffer.from("abc\nok\n")), [{ kind: "overflow", bytes: 13 }, { kind: "line", text: "ok" }]);
  });
});
