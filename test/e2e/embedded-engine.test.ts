import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { parseConfigText } from "../../src/config/load-config.js";
import type { ModelConfig } from "../../src/config/schema.js";
import type { EngineChunk, GenerateRequest } from "../../src/engine/chat-types.js";
import { EmbeddedEngine } from "../../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../../src/engine/embedded/llama-runtime.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { validateGguf } from "../../src/engine/plan/validate-gguf.js";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";
import { writeEditedTinyModel } from "../helpers/plan-fixtures.js";
import { collect } from "../helpers/collect.js";

const logger = pino({ level: "silent" });
const llama = new LlamaRuntime(logger);

function modelConfig(path: string, extra = ""): ModelConfig {
  const result = parseConfigText(`llama:\n  models:\n    m:\n      path: ${JSON.stringify(path)}\n      threads: 1\n      ctx_size: 2048\n${extra}`, {}, "/");
  assert.ok(result.ok, JSON.stringify(result));
  return result.config.llama.models.m!;
}

const text = (chunks: EngineChunk[]): string => chunks.map((c) => (c.type === "text" ? c.delta : "")).join("");

const ask = (input: string, extra: Partial<GenerateRequest> = {}): GenerateRequest => ({
  messages: [
    { role: "system", content: "You are a demo." },
    { role: "user", content: input },
  ],
  temperature: 0,
  maxTokens: 64,
  ...extra,
});

const echoTool = { name: "echo", description: "Echo the text back", parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] } };

describe("embedded engine (node-llama-cpp, generated GGUF)", () => {
  let demo: EmbeddedEngine;
  let tools: EmbeddedEngine;
  let tiny: EmbeddedEngine;

  before(async () => {
    demo = new EmbeddedEngine("demo", modelConfig(await ensureFixture("demo")), { llama, logger, parallel: 2 });
    tools = new EmbeddedEngine("tools", modelConfig(await ensureFixture("demo", { toolMode: true })), { llama, logger, parallel: 1 });
    tiny = new EmbeddedEngine("tiny", modelConfig(await ensureFixture("tiny", { seed: 3 })), { llama, logger, parallel: 2 });
  });

  after(async () => {
    await Promise.all([demo.close(), tools.close(), tiny.close()]);
    await llama.dispose();
  });

  it("warm-up is shared by concurrent callers and reports ready", async () => {
    assert.equal(demo.health().state, "stopped");
    const progress: number[] = [];
    await Promise.all([demo.warmUp({ onProgress: (p) => progress.push(p.progress ?? 0) }), demo.warmUp(), demo.warmUp()]);
    assert.equal(demo.health().state, "ready");
  });

  it("streams the demo sentence, then usage and end", async () => {
    const chunks = await collect(demo.generate(ask("Hello")));
    assert.equal(text(chunks), DEMO_SENTENCE);
    const tail = chunks.slice(-2);
    assert.equal(tail[0]?.type, "usage");
    assert.deepEqual(tail[1], { type: "end", finishReason: "stop" });
    const usage = tail[0];
    assert.ok(usage?.type === "usage");
    assert.ok(usage.outputTokens > 5 && usage.inputTokens > 3, JSON.stringify(usage));
  });

  it("is deterministic with greedy sampling and with a fixed seed", async () => {
    const a = text(await collect(tiny.generate(ask("What is a llama?", { maxTokens: 24 }))));
    const b = text(await collect(tiny.generate(ask("What is a llama?", { maxTokens: 24 }))));
    assert.equal(a, b);
    const c = text(await collect(tiny.generate(ask("Tell me more", { maxTokens: 24, temperature: 0.9, seed: 42 }))));
    const d = text(await collect(tiny.generate(ask("Tell me more", { maxTokens: 24, temperature: 0.9, seed: 42 }))));
    assert.equal(c, d);
  });

  it("runs parallel generations on separate sequences", async () => {
    const [x, y] = await Promise.all([collect(demo.generate(ask("one"))), collect(demo.generate(ask("two")))]);
    assert.equal(text(x), DEMO_SENTENCE);
    assert.equal(text(y), DEMO_SENTENCE);
  });

  it("stops at once on abort: no chunk after the abort, error cancelled", async () => {
    const controller = new AbortController();
    const seen: EngineChunk[] = [];
    let afterAbort = 0;
    await assert.rejects(
      (async () => {
        for await (const chunk of tiny.generate(ask("Write a long story", { maxTokens: 400, signal: controller.signal }))) {
          if (controller.signal.aborted) afterAbort++;
          seen.push(chunk);
          if (seen.length === 3) controller.abort();
        }
      })(),
      (error: unknown) => error instanceof RuntimeError && error.code === "cancelled",
    );
    assert.equal(afterAbort, 0);
    // The sequence went back to the pool: the next generation works.
    assert.ok(text(await collect(tiny.generate(ask("again", { maxTokens: 4 })))).length > 0);
  });

  it("emits a native tool call, then answers after the tool result", async () => {
    const first = await collect(tools.generate(ask(`please ${DEMO_TOOL_TRIGGER} hi`, { tools: [echoTool] })));
    const start = first.find((c) => c.type === "tool_call_start");
    const call = first.find((c) => c.type === "tool_call");
    assert.ok(start && start.type === "tool_call_start" && start.name === "echo", JSON.stringify(first));
    assert.ok(call && call.type === "tool_call");
    assert.deepEqual(JSON.parse(call.call.arguments), { message: "hi" });
    assert.equal(call.call.id, start.id);
    const deltas = first.filter((c) => c.type === "tool_call_delta").map((c) => (c.type === "tool_call_delta" ? c.delta : "")).join("");
    assert.deepEqual(JSON.parse(deltas), { message: "hi" });
    assert.deepEqual(first[first.length - 1], { type: "end", finishReason: "tool_calls" });

    const second = await collect(
      tools.generate({
        ...ask(`please ${DEMO_TOOL_TRIGGER} hi`, { tools: [echoTool] }),
        messages: [
          { role: "system", content: "You are a demo." },
          { role: "user", content: `please ${DEMO_TOOL_TRIGGER} hi` },
          { role: "assistant", content: "", tool_calls: [call.call] },
          { role: "tool", tool_call_id: call.call.id, name: "echo", content: "hi" },
        ],
      }),
    );
    assert.equal(text(second), DEMO_SENTENCE);
    assert.deepEqual(second[second.length - 1], { type: "end", finishReason: "stop" });
  });

  it("a malformed GGUF is refused before llama.cpp sees it (model_missing naming the key), and the process lives on", async () => {
    const bad = await writeEditedTinyModel(path.join(await mkdtemp(path.join(tmpdir(), "bad-gguf-")), "bad.gguf"), (metadata) => {
      delete metadata["llama.feed_forward_length"];
    });
    const engine = new EmbeddedEngine("bad", modelConfig(bad), { llama, logger, parallel: 1, validateModel: async (file) => void (await validateGguf(file)) });
    await assert.rejects(engine.warmUp(), (error: unknown) => error instanceof RuntimeError && error.code === "model_missing" && /feed_forward_length/.test(error.message));
    assert.equal(engine.health().state, "down");
    assert.equal(text(await collect(demo.generate(ask("still alive?")))), DEMO_SENTENCE);
  });

  it("a missing model file is model_missing, and warm-up can be retried", async () => {
    const engine = new EmbeddedEngine("nope", modelConfig("/nonexistent/model.gguf"), { llama, logger, parallel: 1 });
    await assert.rejects(engine.warmUp(), (error: unknown) => error instanceof RuntimeError && error.code === "model_missing");
    assert.equal(engine.health().state, "down");
    await assert.rejects(engine.warmUp(), (error: unknown) => error instanceof RuntimeError && error.code === "model_missing");
  });
});
