import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { pino } from "pino";
import { parseConfigText } from "../../src/config/load-config.js";
import type { ModelConfig } from "../../src/config/schema.js";
import type { GenerateRequest } from "../../src/engine/chat-types.js";
import { EmbeddedEngine } from "../../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../../src/engine/embedded/llama-runtime.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { collect } from "../helpers/collect.js";

const logger = pino({ level: "silent" });
const llama = new LlamaRuntime(logger);
after(() => llama.dispose());

function modelConfig(path: string): ModelConfig {
  const result = parseConfigText(`llama:\n  models:\n    m:\n      path: ${JSON.stringify(path)}\n      threads: 1\n      ctx_size: 512\n`, {}, "/");
  assert.ok(result.ok, JSON.stringify(result));
  return result.config.llama.models.m!;
}

const ask = (signal?: AbortSignal): GenerateRequest => ({
  messages: [{ role: "user", content: "hello" }],
  temperature: 0,
  maxTokens: 4,
  ...(signal ? { signal } : {}),
});

/**
 * The load is held at a gate (the validateModel hook runs inside the shared load), so "cancel
 * while loading" is an event, not a timing guess.
 */
async function gatedEngine(): Promise<{ engine: EmbeddedEngine; loadStarted: Promise<void>; release: () => void }> {
  const path = await ensureFixture("tiny");
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const loadStarted = new Promise<void>((resolve) => (started = resolve));
  const engine = new EmbeddedEngine("tiny", modelConfig(path), {
    llama,
    logger,
    parallel: 2,
    validateModel: async () => {
      started();
      await gate;
    },
  });
  return { engine, loadStarted, release };
}

async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof RuntimeError && error.code === code);
}

describe("embedded engine: one shared model load, each waiter gives up alone", () => {
  it("cancelling the chat that started the load fails only that chat; the other completes", async () => {
    const { engine, loadStarted, release } = await gatedEngine();
    try {
      const first = new AbortController();
      const firstChat = collect(engine.generate(ask(first.signal)));
      const secondChat = collect(engine.generate(ask()));
      await loadStarted;
      first.abort();
      // Promptly: the load is still held at the gate when the first chat fails.
      await rejectsWithCode(firstChat, "cancelled");
      assert.equal(engine.health().state, "starting");
      release();
      const chunks = await secondChat;
      assert.equal(chunks.at(-1)?.type, "end");
      assert.equal(engine.health().state, "ready");
    } finally {
      release();
      await engine.close();
    }
  });

  it("a cancelled warm_up leaves the load to a chat waiting on it", async () => {
    const { engine, loadStarted, release } = await gatedEngine();
    try {
      const warm = new AbortController();
      const warmUp = engine.warmUp({ signal: warm.signal });
      const chat = collect(engine.generate(ask()));
      await loadStarted;
      warm.abort();
      await rejectsWithCode(warmUp, "cancelled");
      release();
      assert.equal((await chat).at(-1)?.type, "end");
    } finally {
      release();
      await engine.close();
    }
  });

  it("close() stops a load in progress and fails its waiters", async () => {
    const { engine, loadStarted, release } = await gatedEngine();
    const chat = collect(engine.generate(ask()));
    const warmUp = engine.warmUp();
    await loadStarted;
    const closing = engine.close();
    release();
    await closing;
    await assert.rejects(chat);
    await rejectsWithCode(warmUp, "shutting_down");
    await rejectsWithCode(engine.warmUp(), "shutting_down");
  });
});
