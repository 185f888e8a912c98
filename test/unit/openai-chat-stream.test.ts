import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import OpenAI from "openai";
import type { EngineChunk, GenerateRequest } from "../../src/engine/chat-types.js";
import { streamOpenAiChat } from "../../src/engine/openai/openai-chat-stream.js";
import { isRuntimeError, type RuntimeError } from "../../src/shared/runtime-error.js";
import {
  chunk,
  closedPort,
  scripted,
  sendData,
  sendJsonError,
  startSse,
  startUpstream,
  usageChunk,
  type ScriptedUpstream,
  type UpstreamHandler,
} from "../helpers/openai-sse-upstream.js";
import { heldResponse } from "../helpers/held-response.js";
import { collect } from "../helpers/collect.js";

const MODEL = "test-model";
let upstream: ScriptedUpstream | undefined;

afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

async function serve(handler: UpstreamHandler): Promise<ScriptedUpstream> {
  upstream = await startUpstream(handler);
  return upstream;
}

function clientFor(baseUrl: string, timeout = 5000): OpenAI {
  return new OpenAI({ baseURL: baseUrl, apiKey: "test-key", maxRetries: 0, timeout, logLevel: "off" });
}

function request(overrides: Partial<GenerateRequest> = {}): GenerateRequest {
  return { messages: [{ role: "user", content: "hi" }], temperature: 0, maxTokens: 32, ...overrides };
}

/** Runs the stream to completion and returns the RuntimeError it threw plus what it yielded first. */
async function collectError(iterable: AsyncIterable<EngineChunk>): Promise<{ error: RuntimeError; yielded: EngineChunk[] }> {
  const yielded: EngineChunk[] = [];
  try {
    for await (const item of iterable) yielded.push(item);
  } catch (err) {
    assert.ok(isRuntimeError(err), `expected a RuntimeError, got ${String(err)}`);
    return { error: err, yielded };
  }
  assert.fail(`expected the stream to throw; it yielded ${JSON.stringify(yielded)}`);
}

function stream(up: ScriptedUpstream, req: GenerateRequest = request(), extraBody?: Record<string, unknown>): AsyncIterable<EngineChunk> {
  return streamOpenAiChat({ client: clientFor(up.baseUrl), model: MODEL, request: req, ...(extraBody ? { extraBody } : {}) });
}

describe("streamOpenAiChat: request body", () => {
  it("sends a streaming body with usage, sampling fields and no tools when there are none", async () => {
    const up = await serve(scripted([chunk({ content: "ok" }, "stop")]));
    await collect(stream(up, request({ temperature: 0.5, maxTokens: 7 })));
    assert.equal(up.requests.length, 1);
    assert.equal(up.requests[0]!.url, "/v1/chat/completions");
    assert.equal(up.requests[0]!.headers.authorization, "Bearer test-key");
    assert.deepEqual(up.requests[0]!.body, {
      model: MODEL,
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.5,
      max_tokens: 7,
    });
  });

  it("maps every message kind, tools, seed, top_p and extra body fields", async () => {
    const up = await serve(scripted([chunk({ content: "ok" }, "stop")]));
    const req = request({
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] },
        { role: "assistant", content: "", tool_calls: [{ id: "call_1", name: "echo", arguments: '{"text":"hi"}' }] },
        { role: "tool", tool_call_id: "call_1", name: "echo", content: "hi" },
        { role: "assistant", content: "done" },
      ],
      tools: [
        { name: "echo", description: "Echo text", parameters: { type: "object", properties: { text: { type: "string" } } } },
        { name: "noop", parameters: { type: "object" } },
      ],
      seed: 42,
      topP: 0.9,
    });
    // `stream: false` in extraBody must not win over the core fields.
    await collect(stream(up, req, { cache_prompt: true, id_slot: 1, stream: false }));
    assert.deepEqual(up.requests[0]!.body, {
      cache_prompt: true,
      id_slot: 1,
      model: MODEL,
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] },
        { role: "assistant", content: "", tool_calls: [{ id: "call_1", type: "function", function: { name: "echo", arguments: '{"text":"hi"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "hi" },
        { role: "assistant", content: "done" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0,
      max_tokens: 32,
      tools: [
        { type: "function", function: { name: "echo", description: "Echo text", parameters: { type: "object", properties: { text: { type: "string" } } } } },
        { type: "function", function: { name: "noop", parameters: { type: "object" } } },
      ],
      seed: 42,
      top_p: 0.9,
    });
  });

  it("omits seed when it is null", async () => {
    const up = await serve(scripted([chunk({ content: "ok" }, "stop")]));
    await collect(stream(up, request({ seed: null })));
    assert.equal(Object.hasOwn(up.requests[0]!.body as object, "seed"), false);
  });
});

describe("streamOpenAiChat: chunk mapping", () => {
  it("maps text deltas, usage and stop", async () => {
    const up = await serve(
      scripted([chunk({ role: "assistant", content: "" }), chunk({ content: "Hel" }), chunk({ content: "lo" }), chunk({}, "stop"), usageChunk(5, 2)]),
    );
    assert.deepEqual(await collect(stream(up)), [
      { type: "text", delta: "Hel" },
      { type: "text", delta: "lo" },
      { type: "usage", inputTokens: 5, outputTokens: 2 },
      { type: "end", finishReason: "stop" },
    ]);
  });

  it("maps reasoning_content to reasoning chunks before the answer", async () => {
    const up = await serve(
      scripted([chunk({ reasoning_content: "think " }), chunk({ reasoning_content: "more" }), chunk({ content: "answer" }), chunk({}, "stop")]),
    );
    assert.deepEqual(await collect(stream(up)), [
      { type: "reasoning", delta: "think " },
      { type: "reasoning", delta: "more" },
      { type: "text", delta: "answer" },
      { type: "end", finishReason: "stop" },
    ]);
  });

  it("reassembles two parallel tool calls with interleaved argument fragments", async () => {
    const up = await serve(
      scripted([
        chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "echo", arguments: "" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"text":' } }] }),
        chunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "add", arguments: '{"a":1,' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"hi"}' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '"b":2}' } }] }),
        chunk({}, "tool_calls"),
        usageChunk(20, 12),
      ]),
    );
    assert.deepEqual(await collect(stream(up)), [
      { type: "tool_call_start", index: 0, id: "call_a", name: "echo" },
      { type: "tool_call_delta", index: 0, delta: '{"text":' },
      { type: "tool_call_start", index: 1, id: "call_b", name: "add" },
      { type: "tool_call_delta", index: 1, delta: '{"a":1,' },
      { type: "tool_call_delta", index: 0, delta: '"hi"}' },
      { type: "tool_call_delta", index: 1, delta: '"b":2}' },
      { type: "tool_call", index: 0, call: { id: "call_a", name: "echo", arguments: '{"text":"hi"}' } },
      { type: "tool_call", index: 1, call: { id: "call_b", name: "add", arguments: '{"a":1,"b":2}' } },
      { type: "usage", inputTokens: 20, outputTokens: 12 },
      { type: "end", finishReason: "tool_calls" },
    ]);
  });

  it("generates an id when the server sends none, and says tool_calls even when the server says stop", async () => {
    const up = await serve(
      scripted([
        chunk({ content: "calling" }),
        chunk({ tool_calls: [{ index: 0, function: { name: "echo", arguments: '{"text":"hi"}' } }] }),
        chunk({}, "stop"),
      ]),
    );
    const chunks = await collect(stream(up));
    const start = chunks[1];
    assert.ok(start?.type === "tool_call_start");
    assert.match(start.id, /^call_[A-Za-z0-9_-]{8,}$/);
    assert.deepEqual(chunks, [
      { type: "text", delta: "calling" },
      { type: "tool_call_start", index: 0, id: start.id, name: "echo" },
      { type: "tool_call_delta", index: 0, delta: '{"text":"hi"}' },
      { type: "tool_call", index: 0, call: { id: start.id, name: "echo", arguments: '{"text":"hi"}' } },
      { type: "end", finishReason: "tool_calls" },
    ]);
  });

  for (const [upstreamReason, ours] of [
    ["length", "length"],
    ["stop", "stop"],
    ["tool_calls", "tool_calls"],
    ["function_call", "tool_calls"],
    // A refusal: the agent loop reports it on `final` (ACP's stopReason refusal); HTTP still says stop.
    ["content_filter", "content_filter"],
    ["vendor_extra", "stop"],
  ] as const) {
    it(`maps finish_reason ${upstreamReason} -> ${ours}`, async () => {
      const up = await serve(scripted([chunk({ content: "x" }), chunk({}, upstreamReason)]));
      assert.deepEqual(await collect(stream(up)), [
        { type: "text", delta: "x" },
        { type: "end", finishReason: ours },
      ]);
    });
  }

  it("accepts a finish_reason without [DONE] (the finish is what counts)", async () => {
    const up = await serve(scripted([chunk({ content: "x" }, "stop")], { done: false }));
    assert.deepEqual(await collect(stream(up)), [
      { type: "text", delta: "x" },
      { type: "end", finishReason: "stop" },
    ]);
  });
});

describe("streamOpenAiChat: errors", () => {
  it("401 -> engine_auth", async () => {
    const up = await serve((_req, res) => sendJsonError(res, 401, "Invalid API Key"));
    const { error, yielded } = await collectError(stream(up));
    assert.equal(error.code, "engine_auth");
    assert.match(error.message, /Invalid API Key/);
    assert.ok(error.message.includes(up.baseUrl));
    assert.deepEqual(yielded, []);
  });

  it("403 -> engine_auth", async () => {
    const up = await serve((_req, res) => sendJsonError(res, 403, "forbidden"));
    assert.equal((await collectError(stream(up))).error.code, "engine_auth");
  });

  it("404 -> model_missing naming the model and the base URL", async () => {
    const up = await serve((_req, res) => sendJsonError(res, 404, "model not found"));
    const { error } = await collectError(stream(up));
    assert.equal(error.code, "model_missing");
    assert.ok(error.message.includes(`"${MODEL}"`), error.message);
    assert.ok(error.message.includes(up.baseUrl), error.message);
  });

  it("500 -> engine_error with the upstream message", async () => {
    const up = await serve((_req, res) => sendJsonError(res, 500, "backend exploded"));
    const { error } = await collectError(stream(up));
    assert.equal(error.code, "engine_error");
    assert.match(error.message, /backend exploded/);
    assert.match(error.message, /HTTP 500/);
  });

  it("400 (e.g. context exceeded) -> engine_error with the upstream message", async () => {
    const up = await serve((_req, res) => sendJsonError(res, 400, "the request exceeds the available context size"));
    const { error } = await collectError(stream(up));
    assert.equal(error.code, "engine_error");
    assert.match(error.message, /exceeds the available context size/);
  });

  it("an error event mid-stream without [DONE] -> engine_error after the text before it", async () => {
    const up = await serve(
      scripted([chunk({ content: "partial" }), { error: { code: 500, message: "Invalid UTF-8 in output", type: "server_error" } }], { done: false }),
    );
    const { error, yielded } = await collectError(stream(up));
    assert.equal(error.code, "engine_error");
    assert.match(error.message, /Invalid UTF-8 in output/);
    assert.deepEqual(yielded, [{ type: "text", delta: "partial" }]);
  });

  it("llama.cpp failing to parse the finished reply into its chat format: the streamed text is the answer", async () => {
    const parseError = { error: { code: 500, message: "The model produced output that does not match the expected peg-native format", type: "server_error" } };
    const up = await serve(scripted([chunk({ content: "hib\uFFFDp " }), chunk({ content: "words" }), parseError], { done: false }));
    assert.deepEqual(await collect(stream(up)), [
      { type: "text", delta: "hib\uFFFDp " },
      { type: "text", delta: "words" },
      { type: "end", finishReason: "stop" },
    ]);
    // Nothing streamed, or a tool call under way: still an error (no answer to keep, or a call cut short).
    await up.close();
    const empty = await serve(scripted([parseError], { done: false }));
    assert.equal((await collectError(stream(empty))).error.code, "engine_error");
    await empty.close();
    const call = await serve(scripted([chunk({ content: "x" }), chunk({ tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "f", arguments: "{" } }] }), parseError], { done: false }));
    assert.match((await collectError(stream(call))).error.message, /peg-native format/);
  });

  it("a stream cut without a finish_reason or [DONE] -> engine_error", async () => {
    const up = await serve(scripted([chunk({ content: "partial" })], { done: false }));
    const { error, yielded } = await collectError(stream(up));
    assert.equal(error.code, "engine_error");
    assert.match(error.message, /no finish_reason/);
    assert.deepEqual(yielded, [{ type: "text", delta: "partial" }]);
  });

  it("a socket destroyed mid-stream -> engine_error", async () => {
    const up = await serve((_req, res) => {
      startSse(res);
      sendData(res, chunk({ content: "partial" }));
      // The fault, paced: the cut comes a moment after the partial chunk so the client has read it
      // (a reset right behind the data may discard it in the client's kernel). Not a synchronization.
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const { error, yielded } = await collectError(stream(up));
    assert.equal(error.code, "engine_error");
    assert.deepEqual(yielded, [{ type: "text", delta: "partial" }]);
  });

  it("connection refused -> engine_unavailable naming the base URL", async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
    const { error } = await collectError(streamOpenAiChat({ client: clientFor(baseUrl), model: MODEL, request: request() }));
    assert.equal(error.code, "engine_unavailable");
    assert.ok(error.message.includes(baseUrl), error.message);
    assert.match(error.message, /ECONNREFUSED/);
  });

  it("no response headers within the client timeout -> engine_unavailable", async () => {
    const up = await serve(() => undefined); // never answers
    const { error } = await collectError(streamOpenAiChat({ client: clientFor(up.baseUrl, 200), model: MODEL, request: request() }));
    assert.equal(error.code, "engine_unavailable");
    assert.ok(error.message.includes(up.baseUrl), error.message);
  });
});

describe("streamOpenAiChat: cancellation and cleanup", () => {
  /** Sends one text chunk and then keeps the response open forever (a model still generating). */
  const hangAfterFirst: UpstreamHandler = (_req, res) => {
    startSse(res);
    sendData(res, chunk({ content: "first" }));
  };

  it("abort mid-stream: throws cancelled, yields nothing more, and the server sees the close promptly", async () => {
    const up = await serve(hangAfterFirst);
    const controller = new AbortController();
    const yielded: EngineChunk[] = [];
    let abortedAt = 0;
    const iterate = async (): Promise<void> => {
      for await (const item of stream(up, request({ signal: controller.signal }))) {
        yielded.push(item);
        abortedAt = Date.now();
        controller.abort();
      }
    };
    await assert.rejects(iterate(), (err: unknown) => isRuntimeError(err) && err.code === "cancelled");
    assert.deepEqual(yielded, [{ type: "text", delta: "first" }]);
    const closed = await up.requests[0]!.closed;
    assert.equal(closed.finished, false, "the client hung up before the server ended the response");
    assert.ok(closed.at - abortedAt < 1000, `server saw the close ${closed.at - abortedAt} ms after the abort`);
  });

  it("abort while waiting for the next chunk: the pending read ends with cancelled", async () => {
    const up = await serve(hangAfterFirst);
    const controller = new AbortController();
    const iterator = stream(up, request({ signal: controller.signal }))[Symbol.asyncIterator]();
    assert.deepEqual(await iterator.next(), { done: false, value: { type: "text", delta: "first" } });
    // The read is pending from here on (the iterator awaits the next chunk of a server that hangs).
    const pending = iterator.next();
    controller.abort();
    await assert.rejects(pending, (err: unknown) => isRuntimeError(err) && err.code === "cancelled");
    assert.equal((await up.requests[0]!.closed).finished, false);
  });

  it("abort before the response headers: cancelled and the request is closed", async () => {
    const held = heldResponse();
    const up = await serve(() => held.hold(() => undefined)); // never answers
    const controller = new AbortController();
    const iterator = stream(up, request({ signal: controller.signal }))[Symbol.asyncIterator]();
    const pending = iterator.next();
    await held.arrived;
    controller.abort();
    await assert.rejects(pending, (err: unknown) => isRuntimeError(err) && err.code === "cancelled");
    assert.equal((await up.requests[0]!.closed).finished, false);
  });

  it("an already-aborted signal: cancelled without any request", async () => {
    const up = await serve(scripted([chunk({ content: "x" }, "stop")]));
    const { error } = await collectError(stream(up, request({ signal: AbortSignal.abort() })));
    assert.equal(error.code, "cancelled");
    assert.equal(up.requests.length, 0);
  });

  it("a consumer that breaks early closes the request", async () => {
    const up = await serve(hangAfterFirst);
    for await (const item of stream(up)) {
      assert.deepEqual(item, { type: "text", delta: "first" });
      break;
    }
    const closed = await up.requests[0]!.closed;
    assert.equal(closed.finished, false);
  });
});
