import { pino } from "pino";
import { runModelStep } from "../src/agent/model-step.js";
import { withCoalescedEmit } from "../src/agent/delta-coalescer.js";
import { modelSchema } from "../src/config/schema.js";
import { STDIO_DEFAULTS } from "../src/config/stdio-defaults.js";
import type { EngineChunk } from "../src/engine/chat-types.js";
import { EmbeddedEngine } from "../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../src/engine/embedded/llama-runtime.js";
import type { Engine } from "../src/engine/engine.js";
import { ManagedEngine } from "../src/engine/scheduler/managed-engine.js";
import { AsyncQueue } from "../src/shared/async-queue.js";
import { toEventFields } from "../src/wire/agent-event-fields.js";
import { ensureFixture } from "../test/fixtures/gguf/index.js";
import { median } from "./bench-results.js";

/**
 * bench:token-path — what the agent's per-token path costs in one process, where the machine's
 * noise does not reach the figure (see docs/benchmarks.md, "The per-token path"):
 *
 * 1. CPU per token of engine stream -> ManagedEngine -> runModelStep -> coalescer (the default stdio.coalesce_ms) ->
 *    toEventFields -> JSON line, with a fake engine that pushes one text chunk per event-loop
 *    turn (as node-llama-cpp delivers them), minus a bare loop of the same turns; and the same
 *    path on the unwrapped engine (ManagedEngine's share).
 * 2. With the real embedded engine (tiny model): how many engine chunks find their reader
 *    waiting (handed over at once) and how many find it busy (the only ones a batch could merge).
 *
 * Env: BENCH_TOKENS (20000), BENCH_ROUNDS (6, the first is a warm-up).
 */

const tokens = Number(process.env.BENCH_TOKENS ?? "20000");
const rounds = Number(process.env.BENCH_ROUNDS ?? "6");
const out = (line = ""): void => void process.stdout.write(`${line}\n`);
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const cpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** An engine whose stream is `tokens` text chunks, one per event-loop turn, then usage and end. */
function fakeEngine(): Engine {
  return {
    kind: "embedded",
    capabilities: { images: false, requiredToolChoice: false },
    modelName: "fake",
    warmUp: async () => undefined,
    health: () => ({ state: "ready", degradationTier: "NORMAL", memoryBytes: 0 }),
    close: async () => undefined,
    generate: () => {
      const queue = new AsyncQueue<EngineChunk>();
      void (async () => {
        for (let i = 0; i < tokens; i++) {
          await tick();
          queue.push({ type: "text", delta: " word" });
        }
        queue.push({ type: "usage", inputTokens: 1, outputTokens: tokens });
        queue.push({ type: "end", finishReason: "length" });
        queue.close();
      })();
      return queue;
    },
  };
}

/** One model step through the coalescer to serialised lines; resolves with the number of lines. */
async function step(engine: Engine, maxTokens: number, input = "x"): Promise<number> {
  let lines = 0;
  await withCoalescedEmit(
    (event) => {
      const { name, fields } = toEventFields(event);
      JSON.stringify({ id: "t", type: "event", event: name, ...fields });
      lines++;
    },
    { windowMs: STDIO_DEFAULTS.coalesce_ms },
    (emit) => runModelStep({ engine, messages: [{ role: "system", content: "You are a helpful assistant." }, { role: "user", content: input }], tools: [], temperature: 0, maxTokens, seed: null, step: 0, signal: new AbortController().signal, emit }),
  );
  return lines;
}

async function perToken(run: () => Promise<unknown>): Promise<number> {
  const started = cpuMs();
  await run();
  return ((cpuMs() - started) * 1000) / tokens;
}

const logger = pino({ level: "warn" });
const fake = fakeEngine();
const managed = new ManagedEngine(fake, async () => fake, { idleUnloadMs: null, logger });
const bare = async (): Promise<void> => {
  for (let i = 0; i < tokens; i++) await tick();
};
const pathCost: number[] = [];
const managedCost: number[] = [];
for (let round = 0; round < rounds; round++) {
  const loop = await perToken(bare);
  const through = await perToken(() => step(managed, tokens));
  const unwrapped = await perToken(() => step(fake, tokens));
  if (round === 0) continue;
  pathCost.push(through - loop);
  managedCost.push(through - unwrapped);
}
out(`bench:token-path  ${tokens} tokens a round, ${rounds - 1} rounds after a warm-up`);
out(`  per-token path CPU over a bare loop:  median ${median(pathCost).toFixed(2)} us/token  (${pathCost.map((v) => v.toFixed(2)).join(", ")})`);
out(`  of which ManagedEngine's stream:      median ${median(managedCost).toFixed(2)} us/token  (${managedCost.map((v) => v.toFixed(2)).join(", ")})`);

// The real engine: does the reader ever fall behind, so that a batch would hold more than one chunk?
let waiting = 0;
let busy = 0;
// Counted on the queue itself (the engine creates its own): the original is called with the queue as `this`.
// eslint-disable-next-line @typescript-eslint/unbound-method
const push = AsyncQueue.prototype.push;
AsyncQueue.prototype.push = function (this: AsyncQueue<unknown>, item: unknown): void {
  if ((this as unknown as { waiting: unknown }).waiting) waiting++;
  else busy++;
  push.call(this, item);
};
const modelPath = await ensureFixture("tiny", { seed: 3 });
const runtime = new LlamaRuntime(logger);
const config = modelSchema.parse({ path: modelPath, threads: 1, ctx_size: 4096 });
const embedded = new EmbeddedEngine("default", config, { llama: runtime, logger, parallel: config.parallel });
const real = new ManagedEngine(embedded, async () => embedded, { idleUnloadMs: null, logger });
await step(real, 16, "warm up");
for (let turn = 0; turn < 3; turn++) {
  waiting = 0;
  busy = 0;
  const lines = await step(real, 256, `Tell me a long story, part ${turn + 1}`);
  out(`  tiny model, 256 tokens: ${waiting} engine chunks found the reader waiting, ${busy} found it busy; ${lines} events after the coalescer`);
}
AsyncQueue.prototype.push = push;
await real.close();
await runtime.dispose();
