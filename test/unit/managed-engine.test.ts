import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pino } from "pino";
import { parseConfigText } from "../../src/config/load-config.js";
import type { EngineChunk, GenerateRequest } from "../../src/engine/chat-types.js";
import { EngineRegistry } from "../../src/engine/create-engine.js";
import type { Engine, EngineHealth } from "../../src/engine/engine.js";
import { LlamaRuntime } from "../../src/engine/embedded/llama-runtime.js";
import { ManagedEngine } from "../../src/engine/scheduler/managed-engine.js";
import { healthBody } from "../../src/http/routes/health-status.js";
import { isRuntimeError } from "../../src/shared/runtime-error.js";
import { captureLogger } from "../helpers/capture-logger.js";

/**
 * A model backend whose load and generations the test drives: `loaded` after warmUp, a generation
 * runs until `release()`; counts closes. A double of the Engine interface for the lifecycle logic
 * (the real engines are unloaded end to end in test/e2e/stdio-pull.test.ts).
 */
class HeldEngine implements Engine {
  readonly kind = "embedded";
  readonly capabilities = { images: false, requiredToolChoice: false };
  loaded = false;
  closed = 0;
  private releases: Array<() => void> = [];
  private generating: Array<() => void> = [];

  constructor(readonly modelName = "m") {}

  async warmUp(): Promise<void> {
    this.loaded = true;
  }

  health(): EngineHealth {
    return this.loaded ? { state: "ready", degradationTier: "NORMAL", memoryBytes: 1234 } : { state: "stopped", degradationTier: "NORMAL" };
  }

  async countTokens(text: string): Promise<number> {
    return text.length;
  }

  /** Resolves when the next generation reaches this engine (after the manager's admission). */
  generationStarted(): Promise<void> {
    return new Promise((resolve) => this.generating.push(resolve));
  }

  generate(_request: GenerateRequest): AsyncIterable<EngineChunk> {
    const wait = new Promise<void>((resolve) => this.releases.push(resolve));
    for (const started of this.generating.splice(0)) started();
    return (async function* () {
      await wait;
      yield { type: "end", finishReason: "stop" };
    })();
  }

  release(): void {
    for (const release of this.releases.splice(0)) release();
  }

  async close(): Promise<void> {
    this.closed += 1;
    this.loaded = false;
  }
}

async function drain(stream: AsyncIterable<EngineChunk>): Promise<void> {
  for await (const chunk of stream) void chunk;
}

describe("ManagedEngine", () => {
  const logger = pino({ level: "silent" });

  it("has exactly the optional methods of the engine it manages", () => {
    const managed = new ManagedEngine(new HeldEngine(), async () => new HeldEngine(), { idleUnloadMs: null, logger });
    assert.equal(typeof managed.countTokens, "function");
    assert.equal(managed.embed, undefined, "no embeddings: front doors test for the method");
    assert.equal(managed.complete, undefined);
    assert.equal(managed.kind, "embedded");
  });

  it("refuses to unload under a running generation, then frees the model; the next use loads a fresh engine", async () => {
    const made: HeldEngine[] = [];
    const make = (): HeldEngine => {
      const engine = new HeldEngine();
      made.push(engine);
      return engine;
    };
    const managed = new ManagedEngine(make(), async () => make(), { idleUnloadMs: null, logger });
    assert.equal(await managed.unload(), false, "nothing loaded, nothing to free");
    await managed.warmUp();
    const started = made[0]?.generationStarted();
    const running = drain(managed.generate({ messages: [], temperature: 0, maxTokens: 1 }));
    await started;
    assert.equal(managed.inFlight, 1);
    await assert.rejects(managed.unload(), (error: unknown) => isRuntimeError(error) && error.code === "busy" && error.details?.in_flight === 1);
    made[0]?.release();
    await running;
    assert.equal(await managed.unload(), true);
    assert.equal(made[0]?.closed, 1);
    assert.equal(made.length, 2, "a fresh, unloaded engine took its place");
    assert.equal(managed.health().state, "stopped");
    await managed.warmUp();
    assert.equal(made[1]?.loaded, true);
  });

  it("unloads after idle_unload_s without use, and not while a request runs", async (context) => {
    context.mock.timers.enable({ apis: ["setTimeout", "Date"] });
    const made: HeldEngine[] = [];
    const { logger: log, records } = captureLogger();
    const make = (): HeldEngine => {
      const engine = new HeldEngine();
      made.push(engine);
      return engine;
    };
    const managed = new ManagedEngine(make(), async () => make(), { idleUnloadMs: 60_000, logger: log });
    await managed.warmUp();
    context.mock.timers.tick(30_000);
    assert.equal(managed.health().info?.idle_s, 30);
    assert.equal(managed.health().info?.idle_unload_s, 60);
    const started = made[0]?.generationStarted();
    const running = drain(managed.generate({ messages: [], temperature: 0, maxTokens: 1 }));
    await started;
    context.mock.timers.tick(120_000);
    assert.equal(made[0]?.closed, 0, "in use: the idle timer does not run");
    made[0]?.release();
    await running;
    context.mock.timers.tick(59_999);
    assert.equal(made[0]?.closed, 0);
    context.mock.timers.tick(1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(made[0]?.closed, 1);
    assert.ok(records().some((line) => line.msg === "model unloaded" && line.reason === "idle for 60 s (idle_unload_s)" && line.memory_bytes === 1234));
  });
});

describe("EngineRegistry.unload", () => {
  const config = (() => {
    const parsed = parseConfigText("llama:\n  models:\n    a:\n      path: /nowhere/a.gguf\n    b:\n      path: /nowhere/b.gguf\n", {}, "/");
    assert.ok(parsed.ok);
    return parsed.config;
  })();

  it("names only the models that were loaded; an unknown model is invalid_params listing the known ones", async () => {
    const registry = new EngineRegistry({ config, logger: pino({ level: "silent" }), llama: new LlamaRuntime(pino({ level: "silent" })) });
    await registry.get("a");
    assert.deepEqual(await registry.unload(), [], "created but never loaded");
    await assert.rejects(registry.unload("c"), (error: unknown) => isRuntimeError(error) && error.code === "invalid_params" && /configured models: a, b/.test(error.message));
    await registry.closeAll();
  });
});

describe("/health body", () => {
  it("says per model whether it is loaded and the memory it holds", () => {
    const { body } = healthBody(
      {
        warmUp: "ready",
        defaultModel: "a",
        engines: { a: { state: "ready", degradationTier: "NORMAL", memoryBytes: 4096 }, b: { state: "stopped", degradationTier: "NORMAL" } },
        tools: [],
      },
      "1.0.0",
    );
    assert.deepEqual(body.models, {
      a: { state: "ready", loaded: true, memory_bytes: 4096, degradation_tier: "NORMAL" },
      b: { state: "stopped", loaded: false, degradation_tier: "NORMAL" },
    });
    assert.equal(body.engine.memory_bytes, 4096);
  });
});
