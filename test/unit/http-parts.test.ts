import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentEvent } from "../../src/agent/events.js";
import { configSchema } from "../../src/config/schema.js";
import { healthBody } from "../../src/http/routes/health-status.js";
import type { RuntimeHealth } from "../../src/diagnostics/runtime-health.js";
import { HttpError, toOpenAiError } from "../../src/http/http-error.js";
import { chunkObject, textChunkJson } from "../../src/http/openai/completion.js";
import { framesFor } from "../../src/http/openai/event-frames.js";
import { lastUserInput, parseChatRequest } from "../../src/http/openai/request-schema.js";
import { assertNoPortClash } from "../../src/http/server/port-check.js";
import { FrameStream } from "../../src/http/sse/frame-stream.js";
import { InFlightWork } from "../../src/http/request/in-flight-work.js";
import { RequestRecord } from "../../src/http/request/request-record.js";
import { startRequestWork } from "../../src/http/request/request-work.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { ERROR_CODES, RuntimeError } from "../../src/shared/runtime-error.js";

const ALL_EVENTS: AgentEvent[] = [
  { event: "run_start", user_input: "u", trace_id: "t", session_id: "s", agent: "a" },
  { event: "memory_start", snippets: 1 },
  { event: "llm_start", step: 0 },
  { event: "prompt_progress", step: 0, processed: 600, total: 1000, cached: 100 },
  { event: "llm_chunk", step: 0, delta: "d" },
  { event: "thinking_chunk", step: 0, delta: "r" },
  { event: "usage", step: 0, input_tokens: 3, output_tokens: 4 },
  { event: "llm_done", step: 0 },
  { event: "tool_start", step: 0, tool: "echo", args: { m: 1 } },
  { event: "tool_done", step: 0, tool: "echo", status: "ok", preview: "p", retryable: false, ms: 2 },
  { event: "final", step: 1, response: "r" },
  { event: "loop_abort", step: 2, reason: "max_steps" },
];

describe("HTTP parts", () => {
  it("framesFor: default mode sends only role, content and reasoning chunks; events mode names every event", () => {
    const identity = { id: "x", created: 1, model: "a" };
    const plain = { identity, events: false, progress: null };
    const framesPlain = ALL_EVENTS.flatMap((e) => framesFor(e, plain));
    assert.equal(framesPlain.length, 3);
    assert.ok(framesPlain.every((f) => f.startsWith("data: {")));
    const reasoning = framesPlain.map((f) => JSON.parse(f.slice(6)) as { choices: Array<{ delta: Record<string, unknown> }> }).filter((c) => "reasoning_content" in (c.choices[0]?.delta ?? {}));
    assert.equal(reasoning.length, ALL_EVENTS.filter((e) => e.event === "thinking_chunk").length, "thinking goes to delta.reasoning_content, never content");
    assert.equal(identity.id, "chatcmpl-t");
    const events = { identity, events: true, progress: null };
    const named = ALL_EVENTS.flatMap((e) => framesFor(e, events)).filter((f) => f.startsWith("event: "));
    assert.deepEqual(named.map((f) => f.slice(7, f.indexOf("\n"))), ALL_EVENTS.map((e) => e.event));
    assert.equal(named[3], 'event: prompt_progress\ndata: {"step":0,"processed":600,"total":1000,"cached":100}\n\n');
    assert.equal(named[8], 'event: tool_start\ndata: {"step":0,"tool":"echo","args":{"m":1}}\n\n');
  });

  it("framesFor: return_progress adds llama-server's prompt_progress chunk (empty choices) to the default stream", () => {
    const identity = { id: "chatcmpl-p", created: 1, model: "a" };
    const ctx = { identity, events: false, progress: { stepStartedAt: 0 } };
    const frames = ALL_EVENTS.flatMap((e) => framesFor(e, ctx)).map((f) => JSON.parse(f.slice(6)) as Record<string, unknown>);
    const progress = frames.filter((f) => "prompt_progress" in f);
    assert.equal(progress.length, 1);
    const chunk = progress[0] as { choices: unknown[]; object: string; prompt_progress: Record<string, number> };
    assert.deepEqual(chunk.choices, []);
    assert.equal(chunk.object, "chat.completion.chunk");
    assert.deepEqual(Object.keys(chunk.prompt_progress), ["total", "cache", "processed", "time_ms"]);
    assert.deepEqual([chunk.prompt_progress.total, chunk.prompt_progress.cache, chunk.prompt_progress.processed], [1000, 100, 600]);
    assert.ok(Number.isInteger(chunk.prompt_progress.time_ms) && (chunk.prompt_progress.time_ms ?? -1) >= 0);
  });

  it("textChunkJson: byte for byte the serialisation of the chunk object, whatever the text", () => {
    const identities = [
      { id: "chatcmpl-0123456789abcdef", created: 1764600000, model: "talker" },
      { id: 'chatcmpl-"quoted"\\', created: 0, model: "m\u00e9/\u2028odd\n" },
    ];
    const texts = ["", " once", 'say "hi"\n\tthen \\ leave', "\u0000\u001f\u007f", "héllo 日本 🙂", "\ud83d", "\u2028\u2029", "</script>"];
    for (const identity of identities) {
      for (const text of texts) {
        for (const field of ["content", "reasoning_content"] as const) {
          assert.equal(textChunkJson(identity, field, text), JSON.stringify(chunkObject(identity, { [field]: text })), `${field} ${JSON.stringify(text)}`);
        }
      }
    }
  });

  it("toOpenAiError: every RuntimeError code has a status; unknown errors are a safe 500", () => {
    for (const code of ERROR_CODES) {
      const { status, body } = toOpenAiError(new RuntimeError(code, "m"));
      assert.ok(status >= 400 && status < 600, code);
      assert.equal(body.error.code, code);
    }
    assert.deepEqual(toOpenAiError(new TypeError("at secret.js:1")).body, { error: { message: "Internal error", type: "server_error", param: null, code: "internal_error" } });
    assert.equal(toOpenAiError(new HttpError("session_busy", "b", "session_id")).status, 409);
    assert.equal(toOpenAiError(new RuntimeError("invalid_request", "x", { details: { param: "user_id" } })).body.error.param, "user_id");
  });

  it("request schema: unknown OpenAI fields tolerated; only the last user message; parts mapped", () => {
    const request = parseChatRequest({
      model: "a", temperature: 0.2, tools: [], n: 1,
      messages: [{ role: "user", content: "old" }, { role: "assistant", content: null }, { role: "user", content: [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: "data:x", detail: "low" } }] }],
    });
    assert.deepEqual(lastUserInput(request), [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: "data:x" } }]);
    assert.equal(lastUserInput(parseChatRequest({ messages: [], resume: true })), undefined);
    assert.throws(() => lastUserInput(parseChatRequest({ messages: [{ role: "system", content: "s" }] })), /user message/);
    assert.throws(() => parseChatRequest({ messages: [], stream: "yes" }), (e: unknown) => e instanceof RuntimeError && e.details?.param === "stream");
  });

  it("FrameStream: frames flow on pull; keep-alive comments when idle; a reader that never pulls is cancelled past the cap", async () => {
    const reasons: string[] = [];
    const frames = new FrameStream({ keepAliveMs: 20, maxPendingBytes: 100, onCancel: (r) => reasons.push(r) });
    frames.push("data: 1\n\n");
    const reader = frames.body.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "data: 1\n\n");
    // The keep-alive timer is unref'd (it must never hold a process open): hold the loop meanwhile.
    const hold = setTimeout(() => undefined, 1000);
    assert.equal(new TextDecoder().decode((await reader.read()).value), ": keep-alive\n\n");
    clearTimeout(hold);
    frames.push("data: 2\n\n");
    frames.end();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "data: 2\n\n");
    assert.equal((await reader.read()).done, true);

    const stuck = new FrameStream({ keepAliveMs: 10_000, maxPendingBytes: 100, onCancel: (r) => reasons.push(r) });
    for (let i = 0; i < 20; i += 1) stuck.push("data: 0123456789\n\n");
    assert.equal(stuck.isCancelled, true);
    assert.match(reasons[0] ?? "", /not reading/);
  });

  it("health: degraded is still 200; a failed warm-up is down (503)", () => {
    const base: RuntimeHealth = { warmUp: "ready", defaultModel: "m", engines: { m: { state: "ready", degradationTier: "REDUCED_CONTEXT" } }, tools: [] };
    assert.deepEqual([healthBody(base, "v").status, healthBody(base, "v").body.status], [200, "degraded"]);
    const failed = healthBody({ ...base, warmUp: "failed", warmUpError: "model missing", engines: { m: { state: "down", degradationTier: "NORMAL", detail: "model missing" } } }, "v");
    assert.deepEqual([failed.status, failed.body.status, failed.body.warm_up], [503, "down", "model missing"]);
    const back = healthBody({ ...base, warmUp: "failed", warmUpError: "x", engines: { m: { state: "ready", degradationTier: "NORMAL" } } }, "v");
    assert.deepEqual([back.status, back.body.status], [200, "ok"], "a chat's retried warm-up brought the engine back");
    const tool = healthBody({ ...base, engines: { m: { state: "ready", degradationTier: "NORMAL" } }, tools: [{ server: "x", state: "failed", pid: null, tools: 0, error: "boom" }] }, "v");
    assert.deepEqual([tool.status, tool.body.status, tool.body.tools.x], [200, "degraded", { state: "failed", tools: 0, pid: null, error: "boom" }]);
  });

  it("request work: aborted work logs once when it has stopped (with stopped_ms); finished work does not; a prompt's reading is logged at debug", () => {
    const { logger, records } = captureLogger("debug");
    const inFlight = new InFlightWork();
    const client = new AbortController();
    const cut = startRequestWork({ requestSignal: client.signal, inFlight, logger });
    const whole = startRequestWork({ requestSignal: new AbortController().signal, inFlight, logger });
    assert.equal(inFlight.size, 2);
    client.abort();
    assert.equal(cut.controller.signal.reason, "client disconnected");
    assert.deepEqual(records(), [], "nothing until the work has stopped");
    cut.finish();
    cut.finish();
    whole.finish();
    assert.equal(inFlight.size, 0);
    const stopped = records();
    assert.equal(stopped.length, 1);
    assert.equal(stopped[0]?.msg, "cancelled work stopped");
    assert.equal(stopped[0]?.reason, "client disconnected");
    assert.equal(typeof stopped[0]?.stopped_ms, "number");
    new RequestRecord("r1", logger).observe({ event: "prompt_progress", step: 0, processed: 128, total: 4000, cached: 0 });
    const read = records().at(-1);
    assert.deepEqual([read?.msg, read?.level, read?.processed, read?.total, read?.cached, read?.step], ["reading the prompt", 20, 128, 4000, 0, 0]);
  });

  it("port clash check names both keys; new http keys have defaults", () => {
    const config = configSchema.parse({ llama: { models: { big: { engine: "llama-server", path: "/m.gguf", port: 9000 } } } });
    assert.throws(() => assertNoPortClash(config, 9000), /http\.port.*llama\.models\.big\.port/);
    assert.doesNotThrow(() => assertNoPortClash(config, 9001));
    assert.deepEqual([config.http.allowed_hosts, config.http.session_queue], [[], false]);
  });
});
