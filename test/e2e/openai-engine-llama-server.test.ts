// The openai engine end to end against a real OpenAI-compatible server: llama-server built from
// the llama.cpp source node-llama-cpp ships, serving GGUF fixtures the test suite writes itself.
// Skipped (loudly) when the binary has not been built; never faked.
import assert from "node:assert/strict";
import { after, before, describe, it, type TestContext } from "node:test";
import { modelSchema, type ModelConfig } from "../../src/config/schema.js";
import type { EngineChunk, GenerateRequest } from "../../src/engine/chat-types.js";
import type { ToolSpec } from "../../src/shared/conversation/tool-spec.js";
import { OpenAiEngine } from "../../src/engine/openai/openai-engine.js";
import { isRuntimeError } from "../../src/shared/runtime-error.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { startLlamaServer, type LlamaServerHandle } from "../helpers/openai-llama-server.js";
import { collect } from "../helpers/collect.js";

const SKIP_REASON = "llama-server not built: run npm run build:llama-server";
const API_KEY = "e2e-secret-key";
const binary = findLlamaServerBinary();
if (binary === null) process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);

const ECHO_TOOL: ToolSpec = {
  name: "echo",
  description: "Echo the given text back.",
  parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
};

function config(baseUrl: string, overrides: Partial<ModelConfig> = {}): ModelConfig {
  return { ...modelSchema.parse({ engine: "openai", base_url: baseUrl }), ...overrides };
}

function request(overrides: Partial<GenerateRequest> = {}): GenerateRequest {
  return { messages: [{ role: "user", content: "Hello there" }], temperature: 0, maxTokens: 64, ...overrides };
}

const textOf = (chunks: EngineChunk[]): string => chunks.map((c) => (c.type === "text" ? c.delta : "")).join("");

/** Returns true (after t.skip) when there is no binary: the caller returns at once. */
function skipWithoutBinary(t: TestContext): boolean {
  if (binary !== null) return false;
  t.skip(SKIP_REASON);
  return true;
}

describe("openai engine against a real llama-server", () => {
  /** Plain demo model: answers DEMO_SENTENCE. */
  let demo: LlamaServerHandle | undefined;
  /** Tool-mode demo model behind --api-key: calls echo {"message":"hi"} on /echo. */
  let tools: LlamaServerHandle | undefined;
  /** Tiny random model: never emits end-of-generation, so a stream runs until max_tokens (abort tests). */
  let tiny: LlamaServerHandle | undefined;
  const engines: OpenAiEngine[] = [];

  const engineFor = (server: LlamaServerHandle | undefined, overrides: Partial<ModelConfig> = {}): OpenAiEngine => {
    assert.ok(server, "server not started");
    const engine = new OpenAiEngine("e2e", config(server.baseUrl, overrides), { logger: captureLogger().logger });
    engines.push(engine);
    return engine;
  };

  before(async () => {
    if (binary === null) return;
    const [demoModel, toolModel, tinyModel] = await Promise.all([
      ensureFixture("demo", {}),
      ensureFixture("demo", { toolMode: true }),
      ensureFixture("tiny", {}),
    ]);
    // 2048 / 2 slots = 1024 tokens a slot: the tools prompt (Hermes template + schema) is ~540
    // tokens, more than the 256 a slot that `-c 512` would leave.
    [demo, tools, tiny] = await Promise.all([
      startLlamaServer({ binary, model: demoModel }),
      startLlamaServer({ binary, model: toolModel, extraArgs: ["--api-key", API_KEY] }),
      startLlamaServer({ binary, model: tinyModel, ctxSize: 4096 }),
    ]);
  });

  after(async () => {
    await Promise.all(engines.map((engine) => engine.close()));
    await Promise.all([demo?.stop(), tools?.stop(), tiny?.stop()]);
  });

  it("warms up and streams DEMO_SENTENCE at temperature 0, with usage and finish stop", async (t) => {
    if (skipWithoutBinary(t)) return;
    const engine = engineFor(demo);
    await engine.warmUp();
    assert.equal(engine.health().state, "ready");
    const chunks = await collect(engine.generate(request()));
    assert.equal(textOf(chunks), DEMO_SENTENCE);
    assert.ok(chunks.filter((c) => c.type === "text").length > 1, "the text arrived as several deltas");
    const usage = chunks.find((c) => c.type === "usage");
    assert.ok(usage?.type === "usage", "a usage chunk is present");
    assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0, JSON.stringify(usage));
    assert.deepEqual(chunks.slice(-2), [usage, { type: "end", finishReason: "stop" }]);
  });

  it("a real tool call: echo {\"text\":\"hi\"} with finish tool_calls, then the answer after the tool result", async (t) => {
    if (skipWithoutBinary(t)) return;
    const engine = engineFor(tools, { api_key: API_KEY });
    await engine.warmUp();
    const messages: GenerateRequest["messages"] = [{ role: "user", content: "Please /echo hi" }];
    const chunks = await collect(engine.generate(request({ messages, tools: [ECHO_TOOL] })));

    const start = chunks.find((c) => c.type === "tool_call_start");
    assert.ok(start?.type === "tool_call_start", JSON.stringify(chunks));
    assert.equal(start.name, "echo");
    assert.ok(start.id !== "");
    const calls = chunks.filter((c) => c.type === "tool_call");
    assert.equal(calls.length, 1, JSON.stringify(chunks));
    const call = calls[0]!;
    assert.ok(call.type === "tool_call");
    assert.equal(call.index, 0);
    assert.equal(call.call.id, start.id);
    assert.equal(call.call.name, "echo");
    assert.deepEqual(JSON.parse(call.call.arguments), { message: "hi" });
    const deltas = chunks.filter((c) => c.type === "tool_call_delta").map((c) => (c.type === "tool_call_delta" ? c.delta : ""));
    assert.equal(deltas.join(""), call.call.arguments, "the deltas add up to the complete arguments");
    assert.deepEqual(chunks.at(-1), { type: "end", finishReason: "tool_calls" });
    assert.ok(chunks.some((c) => c.type === "usage"));

    // Second turn: our assistant tool_calls + tool message mapping, rendered by the real template.
    messages.push({ role: "assistant", content: "", tool_calls: [call.call] });
    messages.push({ role: "tool", tool_call_id: call.call.id, name: "echo", content: "hi" });
    const answer = await collect(engine.generate(request({ messages, tools: [ECHO_TOOL] })));
    assert.equal(textOf(answer), DEMO_SENTENCE);
    assert.deepEqual(answer.at(-1), { type: "end", finishReason: "stop" });
  });

  it("a wrong api key -> engine_auth on warm-up and on generate", async (t) => {
    if (skipWithoutBinary(t)) return;
    const isAuth = (err: unknown): boolean => isRuntimeError(err) && err.code === "engine_auth";
    const wrong = engineFor(tools, { api_key: "not-the-key" });
    await assert.rejects(wrong.warmUp(), isAuth);
    assert.equal(wrong.health().state, "down");
    await assert.rejects(collect(wrong.generate(request())), isAuth);
    const missing = engineFor(tools);
    await assert.rejects(missing.warmUp(), isAuth);
  });

  it("abort mid-stream: cancelled at once, nothing after, and llama-server cancels the task", async (t) => {
    if (skipWithoutBinary(t)) return;
    assert.ok(tiny);
    const engine = engineFor(tiny);
    const controller = new AbortController();
    const fromLine = tiny.logLines().length;
    const yielded: EngineChunk[] = [];
    let abortedAt = 0;
    const run = async (): Promise<void> => {
      // ~1 s of generation at the tiny model's speed if nothing stopped it.
      for await (const item of engine.generate(request({ maxTokens: 1500, signal: controller.signal }))) {
        yielded.push(item);
        if (item.type === "text" && abortedAt === 0) {
          abortedAt = Date.now();
          controller.abort();
        }
      }
    };
    await assert.rejects(run(), (err: unknown) => isRuntimeError(err) && err.code === "cancelled");
    assert.ok(Date.now() - abortedAt < 500, "the iterator ended promptly after the abort");
    assert.equal(yielded.length, 1, `nothing is yielded after the abort: ${JSON.stringify(yielded)}`);
    // The server saw our hang-up and stopped generating long before max_tokens.
    const cancelLine = await tiny.waitForLog(/cancel task/, 3000, fromLine);
    assert.ok(cancelLine !== null, `llama-server never cancelled the task:\n${tiny.logLines().slice(fromLine).join("\n")}`);
    const release = await tiny.waitForLog(/stop processing: n_tokens = \d+/, 3000, fromLine);
    const nTokens = Number(/n_tokens = (\d+)/.exec(release ?? "")?.[1] ?? Number.NaN);
    assert.ok(nTokens < 1000, `generation stopped early (n_tokens = ${nTokens} of up to ~1500)`);
    t.diagnostic(`llama-server stopped at n_tokens = ${nTokens} (prompt + generated) after the abort`);
  });

  it("a consumer that stops reading early closes the request and the server cancels", async (t) => {
    if (skipWithoutBinary(t)) return;
    assert.ok(tiny);
    const engine = engineFor(tiny);
    const fromLine = tiny.logLines().length;
    for await (const item of engine.generate(request({ maxTokens: 1500 }))) {
      assert.equal(item.type, "text");
      break;
    }
    assert.ok((await tiny.waitForLog(/cancel task/, 3000, fromLine)) !== null, "llama-server cancelled the task");
    assert.equal(engine.health().info?.["active_requests"], 0);
  });
});
