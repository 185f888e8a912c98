import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { median, ratio, reportRatios } from "./bench-results.js";
import { startStdioCli, type Line } from "./stdio-cli.js";
import { ensureFixture } from "../test/fixtures/gguf/index.js";

/**
 * bench:swap — two embedded models under a memory budget that fits one (the scheduler swaps
 * them), on the built CLI's serve-stdio, rounds interleaved:
 *
 * 1. Time to first token of a chat on B right after a chat on A (the scheduler unloads A, loads
 *    B), against B's cold load (the first chat of a process that has nothing loaded yet; both
 *    processes have node-llama-cpp loaded and the estimates made first, by a `ps`).
 * 2. A session on A with a few turns of history; B's chat swaps A out; A is loaded again
 *    (warm_up); the session's next turn: time to first token with its KV state restored from disk,
 *    against the same turn with no saved state (kv_cache_disk_bytes: 0), evaluated cold.
 *
 * Env: BENCH_ROUNDS (3), BENCH_SWAP_WORDS (words per history turn, 150). See docs/benchmarks.md.
 */

const rounds = Number(process.env.BENCH_ROUNDS ?? "3");
const words = Number(process.env.BENCH_SWAP_WORDS ?? "150");
const out = (line = ""): void => void process.stdout.write(`${line}\n`);
const VOCABULARY = "river stone garden window lantern meadow copper violin harbor orchard thunder pepper canvas silver bridge mirror candle forest pocket ladder".split(" ");

function filler(seed: number, count: number): string {
  let state = (seed * 2654435761) >>> 0;
  const picked: string[] = [];
  for (let i = 0; i < count; i++) {
    state = (state * 1664525 + 1013904223) >>> 0;
    picked.push(VOCABULARY[state % VOCABULARY.length] as string);
  }
  return picked.join(" ");
}

interface Cli {
  /** Milliseconds from sending to the first llm_chunk (chat) or to the result; throws on an error line. */
  call(method: string, params: Line): Promise<{ firstMs: number; lines: Line[] }>;
  stop(): Promise<void>;
}

function startCli(dir: string): Cli {
  const cli = startStdioCli(dir);
  let nextId = 0;
  return {
    call: async (method, params) => {
      const { lines, sentAt } = await cli.request({ id: ++nextId, method, params });
      const end = lines.at(-1);
      if (end?.line.type === "error") throw new Error(JSON.stringify(end.line));
      const first = lines.find(({ line }) => line.event === "llm_chunk");
      return { firstMs: (first ?? end)!.at - sentAt, lines: lines.map(({ line }) => line) };
    },
    stop: () => cli.stop(),
  };
}

async function folder(modelPath: string, budgetBytes: number, kvDiskBytes: number): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "local-ai-swap-"));
  const model = (name: string): string => `    ${name}:\n      path: ${JSON.stringify(modelPath)}\n      threads: 1\n      ctx_size: 4096\n      parallel: 1\n      gpu_layers: 0\n      kv_cache_disk_bytes: ${kvDiskBytes}\n`;
  const agent = (name: string, modelName: string): string => `  ${name}:\n    model: ${modelName}\n    temperature: 0\n    max_tokens: 8\n    memory: false\n    tools: []\n`;
  await writeFile(
    path.join(dir, "config.yaml"),
    `app:\n  data_dir: ./data\nllama:\n  memory_budget: {ram: ${budgetBytes}, vram: 0}\n  models:\n${model("ma")}${model("mb")}agents:\n${agent("a", "ma")}${agent("b", "mb")}`,
  );
  return dir;
}

/** One model's accounted need, from `ps` (plan's estimate) in a process with a roomy budget. */
async function estimateOf(modelPath: string): Promise<number> {
  const dir = await folder(modelPath, 1024 ** 4, 0);
  const cli = startCli(dir);
  const { lines } = await cli.call("ps", {});
  await cli.stop();
  await rm(dir, { recursive: true, force: true });
  const models = (lines.at(-1)?.result as { models: Array<{ name: string; memory: { ram_bytes: number } }> }).models;
  return models.find((entry) => entry.name === "ma")?.memory.ram_bytes ?? 0;
}

const modelPath = await ensureFixture("bench", { shape: "small" });
const need = await estimateOf(modelPath);
const budget = Math.floor(need * 1.5);
out(`bench:swap: two copies of the bench model (${(need / 1024 / 1024).toFixed(1)} MiB each as planned), budget ${(budget / 1024 / 1024).toFixed(1)} MiB (one fits), ${rounds} rounds, ${words} words per history turn`);

const cold: number[] = [];
const swapped: number[] = [];
const restored: number[] = [];
const evaluated: number[] = [];
for (let round = 0; round < rounds; round++) {
  // 1. B cold vs B after A (a swap).
  let dir = await folder(modelPath, budget, 0);
  let cli = startCli(dir);
  // Both sides start from a process whose node-llama-cpp is loaded and estimates made (ps does both):
  // what is compared is the model's load, not the process's start.
  await cli.call("ps", {});
  cold.push((await cli.call("chat", { agent: "b", input: "hello" })).firstMs);
  await cli.stop();
  await rm(dir, { recursive: true, force: true });
  dir = await folder(modelPath, budget, 0);
  cli = startCli(dir);
  await cli.call("ps", {});
  await cli.call("chat", { agent: "a", input: "hello" });
  swapped.push((await cli.call("chat", { agent: "b", input: "hello" })).firstMs);
  await cli.stop();
  await rm(dir, { recursive: true, force: true });

  // 2. A session's turn after its model was swapped out and back: restored vs evaluated cold.
  for (const keep of [true, false]) {
    dir = await folder(modelPath, budget, keep ? 1024 ** 3 : 0);
    cli = startCli(dir);
    for (let turn = 0; turn < 4; turn++) await cli.call("chat", { agent: "a", session_id: "s", input: filler(round * 10 + turn, words) });
    await cli.call("chat", { agent: "b", input: "hello" });
    await cli.call("warm_up", { agent: "a" });
    const next = await cli.call("chat", { agent: "a", session_id: "s", input: filler(round * 10 + 9, words) });
    (keep ? restored : evaluated).push(next.firstMs);
    if (round === 0) {
      const usage = next.lines.find((line) => line.event === "usage") ?? {};
      out(`  ${keep ? "restored" : "cold"}: input ${Number(usage.input_tokens)} tokens, cached ${Number(usage.cached_input_tokens ?? 0)}`);
    }
    await cli.stop();
    await rm(dir, { recursive: true, force: true });
  }
  out(`  round ${round + 1}: B cold ${cold.at(-1)?.toFixed(0)} ms, B after a swap ${swapped.at(-1)?.toFixed(0)} ms; session turn restored ${restored.at(-1)?.toFixed(0)} ms, cold ${evaluated.at(-1)?.toFixed(0)} ms`);
}

const swapRatio = median(swapped) / median(cold);
const restoreRatio = median(restored) / median(evaluated);
out();
out(`TTFT after a swap (unload A, load B) / B's cold load: ${swapRatio.toFixed(2)}x (medians ${median(swapped).toFixed(0)} / ${median(cold).toFixed(0)} ms)`);
out(`session turn after swap out and back, restored / cold: ${restoreRatio.toFixed(2)}x (medians ${median(restored).toFixed(0)} / ${median(evaluated).toFixed(0)} ms; target <= 0.3x)`);
reportRatios("swap", [
  ratio("TTFT after a swap / cold load", swapRatio),
  ratio("session turn after swap: restored / cold", restoreRatio, { atMost: 0.3 }),
]);
