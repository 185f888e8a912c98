import { fork, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { physicalCores } from "../src/engine/cpu-cores.js";
import { benchParamCount, ensureFixture, Mulberry32, resolveBenchShape, type BenchShapeName } from "../test/fixtures/gguf/index.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../test/helpers/llama-server-binary.js";
import type { FromWorker, ToWorker, WorkerArgs } from "./engine-embedded-worker.js";
import { ratio, reportRatios, type BenchRatio } from "./bench-results.js";

/**
 * bench:engine — the embedded engine (node-llama-cpp, in a child process of its own) against a
 * real llama-server on the same benchmark GGUF, in the same run: load time, prompt processing
 * (a fixed 256-token prompt), generation (a fixed number of tokens, greedy, EOS ignored) and peak
 * RSS, at the same threads and context. Rounds are interleaved (and the order alternates) so that
 * machine noise hits both alike; each figure is the median over rounds. Prints the ratios
 * embedded / llama-server. See docs/benchmarks.md.
 *
 * Env: BENCH_ENGINE_SHAPE=small|0.5b (default small), BENCH_ROUNDS (5), BENCH_THREADS ("<physical>,1"),
 * BENCH_PREDICT (128), BENCH_PROMPT (256), BENCH_CTX (2048), BENCH_REPS (2 measured generations per load),
 * BENCH_MAX_GEN_MS (5000: a generation that takes longer stops early; its tok/s still counts).
 */

const shapeName = (process.env.BENCH_ENGINE_SHAPE ?? "small") as BenchShapeName;
const rounds = Number(process.env.BENCH_ROUNDS ?? "5");
const nPredict = Number(process.env.BENCH_PREDICT ?? "128");
const promptLength = Number(process.env.BENCH_PROMPT ?? "256");
const contextSize = Number(process.env.BENCH_CTX ?? "2048");
const reps = Number(process.env.BENCH_REPS ?? "2");
/** Guard: a generation stops after this long (tok/s still counts the tokens it made). */
const maxGenMs = Number(process.env.BENCH_MAX_GEN_MS ?? "5000");
const threadsList = (process.env.BENCH_THREADS ?? `${physicalCores()},1`).split(",").map(Number);
const worker = fileURLToPath(new URL("./engine-embedded-worker.js", import.meta.url));

const out = (line = ""): void => void process.stdout.write(`${line}\n`);

interface Gen {
  prompt_n: number;
  prompt_ms: number;
  predicted_n: number;
  predicted_ms: number;
  main_thread_cpu_ms?: number;
  native?: { prompt_eval_ms: number; prompt_eval_tokens: number; eval_ms: number; eval_runs: number } | null;
}

interface Sample {
  engine: "embedded" | "llama-server";
  threads: number;
  load_ms: number;
  prompt_tps: number;
  gen_tps: number;
  peak_rss_mb: number;
  extra: Record<string, unknown>;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
const promptTps = (g: Gen): number => (g.prompt_n * 1000) / g.prompt_ms;
const genTps = (g: Gen): number => ((g.predicted_n - 1) * 1000) / g.predicted_ms;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** BOS + seeded ordinary token ids (past the specials, bytes and single characters). */
function makePrompt(length: number, vocabSize: number): number[] {
  const random = new Mulberry32(42);
  const tokens = [1];
  while (tokens.length < length) tokens.push(400 + Math.floor(random.next() * (vocabSize - 400)));
  return tokens;
}

// ---------------------------------------------------------------------------------- embedded

class WorkerChild {
  private readonly child: ChildProcess;
  private readonly queue: FromWorker[] = [];
  private waiter: ((message: FromWorker) => void) | null = null;
  private stderr = "";

  constructor(args: WorkerArgs) {
    this.child = fork(worker, [JSON.stringify(args)], { stdio: ["ignore", "inherit", "pipe", "ipc"] });
    this.child.stderr?.on("data", (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-4000)));
    this.child.on("message", (message: FromWorker) => {
      if (this.waiter) {
        const waiter = this.waiter;
        this.waiter = null;
        waiter(message);
      } else this.queue.push(message);
    });
    this.child.on("exit", (code) => {
      if (code !== 0 && this.waiter) this.waiter({ type: "error", message: `worker exited ${code}: ${this.stderr}` });
    });
  }

  async next<T extends FromWorker["type"]>(type: T): Promise<Extract<FromWorker, { type: T }>> {
    const message = this.queue.shift() ?? (await new Promise<FromWorker>((resolve) => (this.waiter = resolve)));
    if (message.type === "error") throw new Error(`embedded worker: ${message.message}`);
    if (message.type !== type) throw new Error(`embedded worker: expected ${type}, got ${message.type}`);
    return message as Extract<FromWorker, { type: T }>;
  }

  send(message: ToWorker): void {
    this.child.send(message);
  }

  exited(): Promise<void> {
    return new Promise((resolve) => (this.child.exitCode !== null ? resolve() : this.child.once("exit", () => resolve())));
  }
}

async function runEmbedded(modelPath: string, threads: number, prompt: number[]): Promise<Sample> {
  const started = performance.now();
  const child = new WorkerChild({ modelPath, contextSize, threads });
  const ready = await child.next("ready");
  const loadMs = performance.now() - started;
  // Warm-up: a short prompt and a few tokens (first-decode allocations), not measured.
  child.send({ type: "run", prompt: prompt.slice(0, 8), nPredict: 4, maxMs: maxGenMs });
  await child.next("result");
  const gens: Gen[] = [];
  for (let i = 0; i < reps; i++) {
    child.send({ type: "run", prompt, nPredict, maxMs: maxGenMs });
    gens.push(await child.next("result"));
  }
  child.send({ type: "exit" });
  const bye = await child.next("bye");
  await child.exited();
  return {
    engine: "embedded",
    threads,
    load_ms: loadMs,
    prompt_tps: median(gens.map(promptTps)),
    gen_tps: median(gens.map(genTps)),
    peak_rss_mb: bye.max_rss_kb / 1024,
    extra: {
      predicted_n: Math.min(...gens.map((g) => g.predicted_n)),
      // Per generated token: wall time vs time inside llama_decode (llama.cpp's own counter).
      wall_ms_per_token: round2(median(gens.map((g) => g.predicted_ms / (g.predicted_n - 1)))),
      decode_ms_per_token: round2(median(gens.map((g) => (g.native ? g.native.eval_ms / g.native.eval_runs : Number.NaN)))),
      js_cpu_ms_per_token: round2(median(gens.map((g) => (g.main_thread_cpu_ms ?? Number.NaN) / (g.predicted_n - 1)))),
      prompt_decode_ms: round2(median(gens.map((g) => g.native?.prompt_eval_ms ?? Number.NaN))),
      boot_ms: Math.round(ready.boot_ms),
      runtime_ms: Math.round(ready.runtime_ms),
      model_ms: Math.round(ready.model_ms),
      context_ms: Math.round(ready.context_ms),
      rss_before_model_mb: Math.round(ready.rss_before_model_kb / 1024),
      ctx_threads: ready.threads,
      batch: ready.batch_size,
      flash_attention: ready.flash_attention,
      cpu_backend: ready.cpu_backend,
    },
  };
}

// ------------------------------------------------------------------------------ llama-server

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function vmHwmMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+)\s+kB/.exec(status)?.[1] ?? "NaN");
  return kb / 1024;
}

interface CompletionTimings {
  prompt_n: number;
  prompt_ms: number;
  predicted_n: number;
  predicted_ms: number;
}

async function complete(origin: string, prompt: number[], n: number): Promise<CompletionTimings> {
  const response = await fetch(`${origin}/completion`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt, n_predict: n, ignore_eos: true, cache_prompt: false, temperature: 0, stream: false, t_max_predict_ms: maxGenMs }),
  });
  const body = (await response.json()) as { timings?: CompletionTimings; tokens_predicted?: number };
  if (!response.ok || body.timings === undefined) throw new Error(`llama-server /completion ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body.timings;
}

async function runServer(binary: string, modelPath: string, threads: number, prompt: number[]): Promise<Sample> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = ["-m", modelPath, "--host", "127.0.0.1", "--port", String(port), "-c", String(contextSize), "-ngl", "0", "--parallel", "1", "-t", String(threads), "--no-webui"];
  const started = performance.now();
  const child = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`llama-server exited ${child.exitCode}: ${stderr}`);
      const ok = await fetch(`${origin}/health`).then((r) => r.ok, () => false);
      if (ok) break;
      if (performance.now() - started > 60_000) throw new Error(`llama-server not ready after 60 s: ${stderr}`);
      await sleep(5);
    }
    const loadMs = performance.now() - started;
    await complete(origin, prompt.slice(0, 8), 4);
    const gens: Gen[] = [];
    for (let i = 0; i < reps; i++) gens.push(await complete(origin, prompt, nPredict));
    const peak = vmHwmMb(child.pid!);
    return {
      engine: "llama-server",
      threads,
      load_ms: loadMs,
      prompt_tps: median(gens.map(promptTps)),
      gen_tps: median(gens.map(genTps)),
      peak_rss_mb: peak,
      extra: {
        prompt_n: gens[0]?.prompt_n,
        predicted_n: Math.min(...gens.map((g) => g.predicted_n)),
        wall_ms_per_token: round2(median(gens.map((g) => g.predicted_ms / (g.predicted_n - 1)))),
        prompt_ms: round2(median(gens.map((g) => g.prompt_ms))),
      },
    };
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

// ---------------------------------------------------------------------------------------- main

const binary = findLlamaServerBinary();
if (binary === null) {
  process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
  process.exit(1);
}
const shape = resolveBenchShape(shapeName);
const modelPath = await ensureFixture("bench", { shape: shapeName });
const prompt = makePrompt(promptLength, shape.vocabSize);
const buildInfo = (() => {
  try {
    return readFileSync(binary.replace(/bin\/llama-server$/, "build-info.txt"), "utf8");
  } catch {
    return "";
  }
})();

out(`bench:engine  model: bench "${shapeName}" (${(benchParamCount(shape) / 1e6).toFixed(0)}M params, ${shape.tensorType}) ${modelPath}`);
out(`cpu: ${cpus()[0]?.model ?? "?"} x${cpus().length}; threads ${threadsList.join(", ")}; ctx ${contextSize}; prompt ${prompt.length} tokens; generate ${nPredict} (greedy, EOS ignored); ${rounds} rounds x ${reps} generations per load`);
out(`llama-server: ${binary}${/GGML_AVX512=OFF/.test(buildInfo) ? " (built x86-64-v3: AVX2, no AVX-512)" : ""}`);
out();

const samples: Sample[] = [];
const fmt = (s: Sample): string =>
  `${s.engine.padEnd(12)} t=${s.threads}  load ${s.load_ms.toFixed(0).padStart(5)} ms  prompt ${s.prompt_tps.toFixed(1).padStart(7)} tok/s  gen ${s.gen_tps.toFixed(1).padStart(6)} tok/s  peak RSS ${s.peak_rss_mb.toFixed(0).padStart(4)} MB  ${JSON.stringify(s.extra)}`;

for (let round = 0; round < rounds; round++) {
  for (const threads of threadsList) {
    // ABBA: the engine that goes first alternates between rounds.
    const order = round % 2 === 0 ? (["embedded", "llama-server"] as const) : (["llama-server", "embedded"] as const);
    for (const engine of order) {
      const sample = engine === "embedded" ? await runEmbedded(modelPath, threads, prompt) : await runServer(binary, modelPath, threads, prompt);
      samples.push(sample);
      out(`round ${round + 1}  ${fmt(sample)}`);
    }
  }
}

out();
const summary: Record<string, unknown> = {};
const ratios: BenchRatio[] = [];
for (const threads of threadsList) {
  const pick = (engine: Sample["engine"], key: "load_ms" | "prompt_tps" | "gen_tps" | "peak_rss_mb"): number =>
    median(samples.filter((s) => s.engine === engine && s.threads === threads).map((s) => s[key]));
  const row = (key: "load_ms" | "prompt_tps" | "gen_tps" | "peak_rss_mb") => ({ embedded: pick("embedded", key), server: pick("llama-server", key), ratio: pick("embedded", key) / pick("llama-server", key) });
  const gen = row("gen_tps");
  const promptRow = row("prompt_tps");
  const load = row("load_ms");
  const rss = row("peak_rss_mb");
  // Per-round ratios (each round's pair ran back to back), to show the spread.
  const pairs = samples.filter((s) => s.threads === threads);
  const perRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const e = pairs.filter((s) => s.engine === "embedded")[r];
    const l = pairs.filter((s) => s.engine === "llama-server")[r];
    if (e && l) perRound.push(e.gen_tps / l.gen_tps);
  }
  out(`threads ${threads} (medians of ${rounds} rounds)          embedded   llama-server   embedded/server`);
  out(`  generation tok/s                  ${gen.embedded.toFixed(1).padStart(9)}   ${gen.server.toFixed(1).padStart(12)}   ${gen.ratio.toFixed(3)}`);
  out(`  prompt tok/s (${prompt.length} tokens)         ${promptRow.embedded.toFixed(1).padStart(9)}   ${promptRow.server.toFixed(1).padStart(12)}   ${promptRow.ratio.toFixed(3)}`);
  out(`  load ms (spawn -> ready)          ${load.embedded.toFixed(0).padStart(9)}   ${load.server.toFixed(0).padStart(12)}   ${load.ratio.toFixed(3)}`);
  out(`  peak RSS MB                       ${rss.embedded.toFixed(0).padStart(9)}   ${rss.server.toFixed(0).padStart(12)}   ${rss.ratio.toFixed(3)}`);
  out(`  per-round generation ratios: ${perRound.map((r) => r.toFixed(3)).join(" ")}`);
  const extraMedian = (engine: Sample["engine"], key: string): number =>
    median(samples.filter((s) => s.engine === engine && s.threads === threads).map((s) => Number(s.extra[key])));
  const perToken = {
    embedded_wall: extraMedian("embedded", "wall_ms_per_token"),
    embedded_decode: extraMedian("embedded", "decode_ms_per_token"),
    embedded_js_cpu: extraMedian("embedded", "js_cpu_ms_per_token"),
    server_wall: extraMedian("llama-server", "wall_ms_per_token"),
  };
  out(
    `  ms per generated token: embedded ${perToken.embedded_wall.toFixed(2)} wall = ${perToken.embedded_decode.toFixed(2)} inside llama_decode + ${(perToken.embedded_wall - perToken.embedded_decode).toFixed(2)} outside (JS main thread on CPU ${perToken.embedded_js_cpu.toFixed(2)}); llama-server ${perToken.server_wall.toFixed(2)} wall`,
  );
  const met = gen.ratio >= 0.95;
  out(`  target (embedded generation within 5% of llama-server): ${met ? "MET" : "NOT MET"} (${((gen.ratio - 1) * 100).toFixed(1)}%)`);
  out();
  ratios.push(ratio(`threads ${threads}: generation tokens/s, embedded / llama-server`, gen.ratio, { atLeast: 0.95 }), ratio(`threads ${threads}: prompt tokens/s, embedded / llama-server`, promptRow.ratio));
  summary[`threads_${threads}`] = { gen_tps: gen, prompt_tps: promptRow, load_ms: load, peak_rss_mb: rss, per_round_gen_ratio: perRound, ms_per_token: perToken };
}
out(JSON.stringify({ shape: shapeName, rounds, reps, n_predict: nPredict, prompt: prompt.length, ctx: contextSize, summary }));
reportRatios("engine", ratios);
