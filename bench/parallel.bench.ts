import { performance } from "node:perf_hooks";
import { modelSchema } from "../src/config/schema.js";
import type { GenerateRequest } from "../src/engine/chat-types.js";
import { EmbeddedEngine } from "../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../src/engine/embedded/llama-runtime.js";
import { createLogger } from "../src/logging/create-logger.js";
import { ensureFixture } from "../test/fixtures/gguf/index.js";
import { ratio, reportRatios } from "./bench-results.js";

/**
 * bench:parallel — aggregate generation tokens/s of N chats at once on one embedded model (one
 * context, N sequences: node-llama-cpp batches their decode steps) against one chat alone, same
 * engine, same run. Rounds alternate. Env: BENCH_PARALLEL (4), BENCH_ROUNDS (3),
 * BENCH_MAX_TOKENS (128), BENCH_MODEL=small|tiny.
 */

const parallel = Number(process.env.BENCH_PARALLEL ?? "4");
const rounds = Number(process.env.BENCH_ROUNDS ?? "3");
const maxTokens = Number(process.env.BENCH_MAX_TOKENS ?? "128");
const out = (line = ""): void => void process.stdout.write(`${line}\n`);
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const modelPath = process.env.BENCH_MODEL === "tiny" ? await ensureFixture("tiny", { seed: 3 }) : await ensureFixture("bench", { shape: "small" });
const logger = createLogger({ level: "warn", env: {} });
const llama = new LlamaRuntime(logger);
const engine = new EmbeddedEngine("bench", modelSchema.parse({ path: modelPath, ctx_size: 1024, parallel }), { llama, logger, parallel });
await engine.warmUp();

/** One chat; resolves with its output token count. Different prompts, so no sequence shares a prefix. */
async function chat(index: number): Promise<number> {
  const request: GenerateRequest = { messages: [{ role: "user", content: `Story number ${index}: tell it.` }], temperature: 0, maxTokens };
  let tokens = 0;
  for await (const chunk of engine.generate(request)) if (chunk.type === "usage") tokens = chunk.outputTokens;
  return tokens;
}

async function measure(n: number, round: number): Promise<number> {
  const started = performance.now();
  const counts = await Promise.all(Array.from({ length: n }, (_, i) => chat(round * 100 + i)));
  return counts.reduce((a, b) => a + b, 0) / ((performance.now() - started) / 1000);
}

const single: number[] = [];
const batched: number[] = [];
for (let round = 0; round < rounds; round++) {
  if (round % 2 === 0) {
    single.push(await measure(1, round));
    batched.push(await measure(parallel, round));
  } else {
    batched.push(await measure(parallel, round));
    single.push(await measure(1, round));
  }
}
await engine.close();
await llama.dispose();
out(`bench:parallel  model ${modelPath}  threads auto  ${rounds} rounds, ${maxTokens} tokens a chat`);
out(`one chat: ${median(single).toFixed(1)} tok/s; ${parallel} chats at once: ${median(batched).toFixed(1)} tok/s aggregate`);
out(`aggregate ratio ${parallel} / 1 = ${(median(batched) / median(single)).toFixed(2)}x (target >= 2x)`);
reportRatios("parallel", [ratio(`${parallel} chats at once / one chat, aggregate tokens/s`, median(batched) / median(single), { atLeast: 2 })]);
