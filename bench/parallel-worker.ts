// Child process of bench/parallel.bench.ts: one embedded engine on one binary, one chat alone and
// N chats at once (order by round), prints one JSON line (ParallelResult) on stdout.
import { performance } from "node:perf_hooks";
import type { LlamaContext, LlamaModel, Token } from "node-llama-cpp";
import { modelSchema } from "../src/config/schema.js";
import type { GenerateRequest } from "../src/engine/chat-types.js";
import { EmbeddedEngine } from "../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../src/engine/embedded/llama-runtime.js";
import { embeddedBinaryOf } from "../src/engine/llama-binary.js";
import { createLogger } from "../src/logging/create-logger.js";
import { ensureFixture } from "../test/fixtures/gguf/index.js";

export interface Measured {
  tokPerS: number;
  /** Tokens per llama_decode call: N chats that share every decode give N. Null when the probe is unavailable. */
  tokensPerDecode: number | null;
  msPerDecode: number | null;
}

/** Median ms of one decode of `tokens` new tokens: all of one sequence (one logits row), or one each of `tokens` sequences (a row each). */
export interface DecodeShape {
  tokens: number;
  oneSequenceMs: number;
  manySequencesMs: number;
}

export interface ParallelResult {
  binary: "prebuilt" | "local";
  model: string;
  maxTokens: number;
  threads: number;
  single: Measured;
  batched: Measured;
  shapes: DecodeShape[];
}

const args = JSON.parse(process.argv[2] ?? "{}") as { binary: "prebuilt" | "local"; parallel: number; round: number };
const maxTokens = Number(process.env.BENCH_MAX_TOKENS ?? "128");
const modelName = process.env.BENCH_MODEL ?? "small";
const modelPath = modelName === "tiny" ? await ensureFixture("tiny", { seed: 3 }) : await ensureFixture("bench", { shape: modelName === "0.5b" ? "0.5b" : "small" });
const logger = createLogger({ level: "warn", env: {} });
const llama = new LlamaRuntime(logger, args.binary === "local" ? "auto" : "prebuilt");
const threads = process.env.BENCH_THREADS === undefined ? "auto" : Number(process.env.BENCH_THREADS);
const engine = new EmbeddedEngine("bench", modelSchema.parse({ path: modelPath, ctx_size: 1024, parallel: args.parallel, threads }), { llama, logger, parallel: args.parallel });
await engine.warmUp();
const { llama: instance } = await llama.get();
if (embeddedBinaryOf(instance).kind !== args.binary) throw new Error(`loaded the ${embeddedBinaryOf(instance).kind} binary, not the ${args.binary} one`);

/**
 * Bench-only probe into node-llama-cpp 3.21.1 internals (the version is pinned): wraps the native
 * context's initBatch/decodeBatch to count decode calls and their tokens, which shows whether the
 * chats really share decodes. The engine's context is private; a bench may look.
 */
function probe(): { reset(): void; read(): { calls: number; tokens: number; ms: number } } | null {
  const context = (Reflect.get(engine, "model") as { current: { context: LlamaContext } | null }).current?.context;
  const native = context === undefined ? undefined : (Reflect.get(context, "_ctx") as Record<string, unknown> | undefined);
  if (context === undefined || native === undefined || typeof native.initBatch !== "function" || typeof native.decodeBatch !== "function") return null;
  const counts = { calls: 0, tokens: 0, ms: 0, pending: 0 };
  const initBatch = (native.initBatch as (n: number) => unknown).bind(native);
  const decodeBatch = (native.decodeBatch as () => Promise<unknown>).bind(native);
  const wrapped = new Proxy(native, {
    get(target, key) {
      if (key === "initBatch") return (n: number) => ((counts.pending = n), initBatch(n));
      if (key === "decodeBatch")
        return async () => {
          const started = performance.now();
          try {
            return await decodeBatch();
          } finally {
            counts.calls += 1;
            counts.tokens += counts.pending;
            counts.ms += performance.now() - started;
          }
        };
      const value = Reflect.get(target, key) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  Reflect.set(context, "_ctx", wrapped);
  return {
    reset: () => Object.assign(counts, { calls: 0, tokens: 0, ms: 0 }),
    read: () => ({ calls: counts.calls, tokens: counts.tokens, ms: counts.ms }),
  };
}
const decodes = probe();

/** One chat; resolves with its output token count. Different prompts, so no sequence shares a prefix. */
async function chat(index: number): Promise<number> {
  const request: GenerateRequest = { messages: [{ role: "user", content: `Story number ${index}: tell it.` }], temperature: 0, maxTokens };
  let tokens = 0;
  for await (const chunk of engine.generate(request)) if (chunk.type === "usage") tokens = chunk.outputTokens;
  return tokens;
}

async function measure(n: number): Promise<Measured> {
  decodes?.reset();
  const started = performance.now();
  const counts = await Promise.all(Array.from({ length: n }, (_, i) => chat(args.round * 100 + i)));
  const tokPerS = counts.reduce((a, b) => a + b, 0) / ((performance.now() - started) / 1000);
  const seen = decodes?.read();
  return { tokPerS, tokensPerDecode: seen ? seen.tokens / seen.calls : null, msPerDecode: seen ? seen.ms / seen.calls : null };
}

/**
 * Where batching can pay: the cost of one decode of n new tokens when they belong to one sequence
 * (a prompt: one logits row) against one token each of n sequences (n parallel chats: n logits
 * rows, n KV streams). A second context on the engine's model, same threads (bench-only access).
 */
async function decodeShapes(max: number): Promise<DecodeShape[]> {
  const current = (Reflect.get(engine, "model") as { current: { context: LlamaContext; model: LlamaModel } | null }).current;
  if (current === null) return [];
  const context = await current.model.createContext({ contextSize: 512, sequences: max, threads: current.context.idealThreads });
  const sequences = Array.from({ length: max }, () => context.getSequence());
  const tokens = (n: number, salt: number): Token[] => Array.from({ length: n }, (_, i) => (300 + ((salt * 131 + i * 17) % 20000)) as Token);
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
  const shapes: DecodeShape[] = [];
  for (const n of [1, max]) {
    const one: number[] = [];
    const many: number[] = [];
    for (let rep = 0; rep < 5; rep++) {
      for (const sequence of sequences) await sequence.clearHistory();
      // The same 16-token history in each sequence first, so both shapes attend over the same context.
      for (const sequence of sequences.slice(0, n)) await sequence.evaluateWithoutGeneratingNewTokens([1 as Token, ...tokens(15, rep)]);
      let started = performance.now();
      await (sequences[0] as (typeof sequences)[number]).evaluateWithoutGeneratingNewTokens(tokens(n, rep + 50));
      one.push(performance.now() - started);
      started = performance.now();
      await Promise.all(sequences.slice(0, n).map((sequence, i) => sequence.evaluateWithoutGeneratingNewTokens(tokens(1, rep + 90 + i))));
      many.push(performance.now() - started);
    }
    shapes.push({ tokens: n, oneSequenceMs: median(one), manySequencesMs: median(many) });
  }
  await context.dispose();
  return shapes;
}

await chat(99); // warm-up: first-decode allocations
let single: Measured;
let batched: Measured;
if (args.round % 2 === 0) {
  single = await measure(1);
  batched = await measure(args.parallel);
} else {
  batched = await measure(args.parallel);
  single = await measure(1);
}
const shapes = await decodeShapes(args.parallel);
const loaded = (Reflect.get(engine, "model") as { current: { context: LlamaContext; model: LlamaModel } | null }).current;
const contextThreads = loaded?.context.idealThreads ?? 0;
await engine.close();
await llama.dispose();
const result: ParallelResult = { binary: args.binary, model: modelPath, maxTokens, threads: contextThreads, single, batched, shapes };
process.stdout.write(`${JSON.stringify(result)}\n`);
