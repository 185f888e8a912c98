import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { llamaServerAutoThreads } from "../src/engine/auto-threads.js";
import { physicalCores } from "../src/engine/cpu-cores.js";
import { findLocalBuild } from "../src/engine/llama-binary.js";
import { ensureFixture } from "../test/fixtures/gguf/index.js";
import { ratio, reportRatios, type BenchRatio } from "./bench-results.js";
import { findLlamaServerBinary } from "../test/helpers/llama-server-binary.js";
import { serverParallel, type ServerParallel } from "./parallel-server.js";
import type { ParallelResult } from "./parallel-worker.js";

/**
 * bench:parallel — aggregate generation tokens/s of N chats at once on one embedded model (one
 * context, N sequences: node-llama-cpp batches their decode steps) against one chat alone, same
 * engine, same process, `threads: auto`. Once per binary (BENCH_BINARIES: node-llama-cpp's
 * `prebuilt` one and the `local` OpenMP build of `npm run build:embedded`, in the default list
 * when it exists), each round in a fresh child process (two llama.cpp builds cannot share one
 * process: their libggml-base.so have the same name). Rounds alternate the order of the binaries
 * and of 1 vs N. For reference the same with a real llama-server and N slots (its own C++
 * batching), when the binary is built. Env: BENCH_PARALLEL (4), BENCH_ROUNDS (3),
 * BENCH_MAX_TOKENS (128), BENCH_MODEL=small|0.5b|tiny, BENCH_BINARIES, BENCH_THREADS (a number
 * instead of each engine's threads: auto), BENCH_SERVER=0 (skip llama-server). See
 * docs/benchmarks.md.
 */

const parallel = Number(process.env.BENCH_PARALLEL ?? "4");
const rounds = Number(process.env.BENCH_ROUNDS ?? "3");
const localBuild = await findLocalBuild();
const binaries = (process.env.BENCH_BINARIES ?? (localBuild === null ? "prebuilt" : "prebuilt,local")).split(",") as Array<"prebuilt" | "local">;
if (binaries.includes("local") && localBuild === null) {
  process.stderr.write("BENCH_BINARIES names local, but there is no local build: run `npm run build:embedded` first\n");
  process.exit(1);
}
const worker = fileURLToPath(new URL("./parallel-worker.js", import.meta.url));
const out = (line = ""): void => void process.stdout.write(`${line}\n`);
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const serverBinary = process.env.BENCH_SERVER === "0" ? null : findLlamaServerBinary();
const serverThreads = process.env.BENCH_THREADS !== undefined ? Number(process.env.BENCH_THREADS) : llamaServerAutoThreads(physicalCores());
const modelName = process.env.BENCH_MODEL ?? "small";
const serverModel = modelName === "tiny" ? await ensureFixture("tiny", { seed: 3 }) : await ensureFixture("bench", { shape: modelName === "0.5b" ? "0.5b" : "small" });
const maxTokens = Number(process.env.BENCH_MAX_TOKENS ?? "128");

const results: ParallelResult[] = [];
const server: ServerParallel[] = [];
for (let round = 0; round < rounds; round++) {
  if (serverBinary !== null) {
    const measured = await serverParallel({ binary: serverBinary, modelPath: serverModel, parallel, threads: serverThreads, maxTokens, round });
    server.push(measured);
    out(`round ${round + 1}  llama-server threads ${measured.threads}  1 completion ${measured.singleTokPerS.toFixed(1).padStart(6)} tok/s   ${parallel} at once ${measured.batchedTokPerS.toFixed(1).padStart(6)} tok/s   ratio ${(measured.batchedTokPerS / measured.singleTokPerS).toFixed(2)}`);
  }
  const order = round % 2 === 0 ? binaries : [...binaries].reverse();
  for (const binary of order) {
    const line = execFileSync(process.execPath, [worker, JSON.stringify({ binary, parallel, round })], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
    const result = JSON.parse(line.trim().split("\n").at(-1) as string) as ParallelResult;
    results.push(result);
    const fmt = (m: ParallelResult["single"]): string =>
      `${m.tokPerS.toFixed(1).padStart(6)} tok/s (${m.tokensPerDecode === null ? "?" : m.tokensPerDecode.toFixed(2)} tokens/decode, ${m.msPerDecode === null ? "?" : m.msPerDecode.toFixed(2)} ms/decode)`;
    out(`round ${round + 1}  ${binary.padEnd(8)} threads ${result.threads}  1 chat ${fmt(result.single)}   ${parallel} chats ${fmt(result.batched)}   ratio ${(result.batched.tokPerS / result.single.tokPerS).toFixed(2)}`);
    out(
      `         decode of n new tokens, ms: ${result.shapes.map((shape) => `n=${shape.tokens}: of one sequence ${shape.oneSequenceMs.toFixed(2)}, one each of ${shape.tokens} sequences ${shape.manySequencesMs.toFixed(2)}`).join("; ")}`,
    );
  }
}

out();
out(`bench:parallel  model ${results[0]?.model ?? "?"}  threads ${process.env.BENCH_THREADS ?? "auto"}  ${rounds} rounds, ${results[0]?.maxTokens ?? "?"} tokens a chat`);
const summary: Record<string, unknown> = {};
const ratios: BenchRatio[] = [];
for (const binary of binaries) {
  const mine = results.filter((r) => r.binary === binary);
  const single = median(mine.map((r) => r.single.tokPerS));
  const batched = median(mine.map((r) => r.batched.tokPerS));
  const perRound = mine.map((r) => r.batched.tokPerS / r.single.tokPerS);
  out(
    `${binary.padEnd(8)} (threads ${mine[0]?.threads}): one chat ${single.toFixed(1)} tok/s; ${parallel} chats at once ${batched.toFixed(1)} tok/s aggregate; ratio ${(batched / single).toFixed(2)}x (per round ${perRound.map((r) => r.toFixed(2)).join(" ")}; target >= 2x)`,
  );
  summary[binary] = { threads: mine[0]?.threads, single_tps: single, batched_tps: batched, ratio: batched / single, per_round: perRound };
  ratios.push(ratio(`${binary === "local" ? "local build" : "embedded"}: ${parallel} chats at once / one chat, aggregate tokens/s`, batched / single, { atLeast: 2 }));
  // Per-token cost of a decode of `parallel` tokens relative to a decode of 1: ~1/parallel means batching is nearly free, 1 means it saves nothing.
  const shapeRatio = (key: "oneSequenceMs" | "manySequencesMs"): number =>
    median(mine.map((r) => (r.shapes.find((s) => s.tokens === parallel)?.[key] ?? Number.NaN) / parallel / (r.shapes.find((s) => s.tokens === 1)?.[key] ?? Number.NaN)));
  out(`         per-token cost of a ${parallel}-token decode / a 1-token decode: ${parallel} tokens of one sequence ${shapeRatio("oneSequenceMs").toFixed(2)}, one token each of ${parallel} sequences ${shapeRatio("manySequencesMs").toFixed(2)}`);
  summary[binary] = { ...(summary[binary] as object), per_token_cost_one_sequence: shapeRatio("oneSequenceMs"), per_token_cost_many_sequences: shapeRatio("manySequencesMs") };
}
if (server.length > 0) {
  const single = median(server.map((m) => m.singleTokPerS));
  const batched = median(server.map((m) => m.batchedTokPerS));
  out(`llama-server (threads ${serverThreads}, --parallel ${parallel}): one completion ${single.toFixed(1)} tok/s; ${parallel} at once ${batched.toFixed(1)} tok/s; ratio ${(batched / single).toFixed(2)}x (per round ${server.map((m) => (m.batchedTokPerS / m.singleTokPerS).toFixed(2)).join(" ")})`);
  summary["llama-server"] = { threads: serverThreads, single_tps: single, batched_tps: batched, ratio: batched / single };
  ratios.push(ratio(`llama-server --parallel ${parallel}: ${parallel} at once / one, aggregate tokens/s (reference)`, batched / single));
}
if (binaries.includes("prebuilt") && binaries.includes("local")) {
  const before = median(results.filter((r) => r.binary === "prebuilt").map((r) => r.single.tokPerS));
  const after = median(results.filter((r) => r.binary === "local").map((r) => r.batched.tokPerS));
  out(`${parallel} chats on the local build / one chat on the prebuilt: ${(after / before).toFixed(2)}x`);
  summary["local_batched_over_prebuilt_single"] = after / before;
}
out(JSON.stringify({ parallel, rounds, summary }));
reportRatios("parallel", ratios);
