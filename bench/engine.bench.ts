import { fork, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { embeddedAutoThreads, llamaServerAutoThreads } from "../src/engine/auto-threads.js";
import { physicalCores } from "../src/engine/cpu-cores.js";
import { findLocalBuild } from "../src/engine/llama-binary.js";
import { benchParamCount, ensureFixture, Mulberry32, resolveBenchShape, type BenchShapeName } from "../test/fixtures/gguf/index.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../test/helpers/llama-server-binary.js";
import type { FromWorker, ToWorker, WorkerArgs } from "./engine-embedded-worker.js";
import { ratio, reportRatios, type BenchRatio } from "./bench-results.js";
import { freePort } from "../test/helpers/free-port.js";

/**
 * bench:engine — the embedded engine (node-llama-cpp, in a child process of its own) against a
 * real llama-server on the same benchmark GGUF, in the same run: load time, prompt processing
 * (a fixed 256-token prompt), generation (a fixed number of tokens, greedy, EOS ignored) and peak
 * RSS, at the same threads and context. Rounds are interleaved (and the order alternates) so that
 * machine noise hits both alike; each figure is the median over rounds. Prints the ratios
 * embedded / llama-server. See docs/benchmarks.md.
 *
 * The embedded side runs once per binary in BENCH_BINARIES: `prebuilt` (node-llama-cpp's own) and
 * `local` (the OpenMP build of `npm run build:embedded`; in the default list when it exists).
 *
 * Env: BENCH_ENGINE_SHAPE=small|0.5b (default small), BENCH_ROUNDS (5), BENCH_THREADS ("<physical>,1"),
 * BENCH_BINARIES ("prebuilt,local" when the local build exists, else "prebuilt"),
 * BENCH_PREDICT (128), BENCH_PROMPT (256), BENCH_CTX (2048), BENCH_REPS (2 measured generations per load),
 * BENCH_MAX_GEN_MS (5000: a generation that takes longer stops early; its tok/s still counts),
 * BENCH_TRAIN_CTX (the model's trained context; default the shape's 8192: set 32768 for prompts past 8 k).
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
const localBuild = await findLocalBuild();
const binaries = (process.env.BENCH_BINARIES ?? (localBuild === null ? "prebuilt" : "prebuilt,local")).split(",") as Array<"prebuilt" | "local">;
if (binaries.includes("local") && localBuild === null) {
  process.stderr.write("BENCH_BINARIES names local, but there is no local build: run `npm run build:embedded` first\n");
  process.exit(1);
}
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

/** embedded = node-llama-cpp's prebuilt binary; embedded-local = the local OpenMP build. */
type Side = "embedded" | "embedded-local" | "llama-server";

interface Sample {
  engine: Side;
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

async function runEmbedded(modelPath: string, threads: number, prompt: number[], binary: "prebuilt" | "local"): Promise<Sample> {
  const started = performance.now();
  const child = new WorkerChild({ modelPath, contextSize, threads, binary: binary === "local" ? "auto" : "prebuilt" });
  const ready = await child.next("ready");
  if (ready.binary !== binary) throw new Error(`embedded worker loaded the ${ready.binary} binary, not the ${binary} one`);
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
    engine: binary === "local" ? "embedded-local" : "embedded",
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
      openmp: ready.openmp,
    },
  };
}

// ------------------------------------------------------------------------------ llama-server


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

/** A completion that takes longer than this counts as a collapse (llama-server's spinning threads on a busy machine), not a crash of the bench. */
const serverTimeoutMs = maxGenMs * 12;

async function complete(origin: string, prompt: number[], n: number): Promise<CompletionTimings> {
  const response = await fetch(`${origin}/completion`, {
    signal: AbortSignal.timeout(serverTimeoutMs),
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
    const gens: Gen[] = [];
    try {
      await complete(origin, prompt.slice(0, 8), 4);
      for (let i = 0; i < reps; i++) gens.push(await complete(origin, prompt, nPredict));
    } catch (error) {
      if (!(error instanceof Error && error.name === "TimeoutError")) throw error;
      // Collapsed: record zero throughput for this round and go on.
      return { engine: "llama-server", threads, load_ms: loadMs, prompt_tps: 0, gen_tps: 0, peak_rss_mb: vmHwmMb(child.pid!), extra: { timed_out_after_ms: serverTimeoutMs } };
    }
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
    const killer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(killer);
  }
}

// ---------------------------------------------------------------------------------------- main

const binary = findLlamaServerBinary();
if (binary === null) {
  process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
  process.exit(1);
}
// A longer trained context than the shape's 8 k (llama-server caps a slot's context at it): prompts past 8 k tokens.
const trainCtx = process.env.BENCH_TRAIN_CTX === undefined ? undefined : Number(process.env.BENCH_TRAIN_CTX);
const shape = trainCtx === undefined ? resolveBenchShape(shapeName) : { ...resolveBenchShape(shapeName), contextLength: trainCtx };
const modelPath = await ensureFixture("bench", { shape: trainCtx === undefined ? shapeName : shape });
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
out(`embedded binaries: ${binaries.join(", ")}${localBuild === null ? "" : ` (local build: ${localBuild.dir})`}`);
out();

const samples: Sample[] = [];
const fmt = (s: Sample): string =>
  `${s.engine.padEnd(14)} t=${s.threads}  load ${s.load_ms.toFixed(0).padStart(5)} ms  prompt ${s.prompt_tps.toFixed(1).padStart(7)} tok/s  gen ${s.gen_tps.toFixed(1).padStart(6)} tok/s  peak RSS ${s.peak_rss_mb.toFixed(0).padStart(4)} MB  ${JSON.stringify(s.extra)}`;
const sides: Side[] = [...binaries.map((b): Side => (b === "local" ? "embedded-local" : "embedded")), "llama-server"];

for (let round = 0; round < rounds; round++) {
  for (const threads of threadsList) {
    // The order of the sides reverses every round, so that drifting load hits each alike.
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const sample =
        side === "llama-server" ? await runServer(binary, modelPath, threads, prompt) : await runEmbedded(modelPath, threads, prompt, side === "embedded-local" ? "local" : "prebuilt");
      samples.push(sample);
      out(`round ${round + 1}  ${fmt(sample)}`);
    }
  }
}

type Key = "load_ms" | "prompt_tps" | "gen_tps" | "peak_rss_mb";
const pick = (side: Side, threads: number, key: Key): number => median(samples.filter((s) => s.engine === side && s.threads === threads).map((s) => s[key]));
/** Per-round ratios of a side against llama-server (each round's samples ran back to back), to show the spread. */
const perRound = (side: Side, threads: number): number[] => {
  const mine = samples.filter((s) => s.engine === side && s.threads === threads);
  const server = samples.filter((s) => s.engine === "llama-server" && s.threads === threads);
  return mine.flatMap((s, r) => (server[r] ? [s.gen_tps / server[r].gen_tps] : []));
};

out();
const summary: Record<string, unknown> = {};
const ratios: BenchRatio[] = [];
for (const threads of threadsList) {
  out(`threads ${threads} (medians of ${rounds} rounds)   ${sides.map((side) => side.padStart(14)).join(" ")}`);
  for (const [key, label] of [["gen_tps", "generation tok/s"], ["prompt_tps", `prompt tok/s (${prompt.length} tok)`], ["load_ms", "load ms"], ["peak_rss_mb", "peak RSS MB"]] as const) {
    out(`  ${label.padEnd(30)}${sides.map((side) => pick(side, threads, key).toFixed(key === "gen_tps" || key === "prompt_tps" ? 1 : 0).padStart(15)).join("")}`);
  }
  const row: Record<string, unknown> = {};
  for (const side of sides.filter((s) => s !== "llama-server")) {
    const extraMedian = (key: string): number => median(samples.filter((s) => s.engine === side && s.threads === threads).map((s) => Number(s.extra[key])));
    const gen = pick(side, threads, "gen_tps") / pick("llama-server", threads, "gen_tps");
    const promptRatio = pick(side, threads, "prompt_tps") / pick("llama-server", threads, "prompt_tps");
    const wall = extraMedian("wall_ms_per_token");
    const decode = extraMedian("decode_ms_per_token");
    out(`  ${side} / llama-server: generation ${gen.toFixed(3)} (per round ${perRound(side, threads).map((r) => r.toFixed(3)).join(" ")}), prompt ${promptRatio.toFixed(3)}`);
    out(`    ms per generated token: ${wall.toFixed(2)} wall = ${decode.toFixed(2)} inside llama_decode + ${(wall - decode).toFixed(2)} outside (JS main thread on CPU ${extraMedian("js_cpu_ms_per_token").toFixed(2)}); llama-server ${median(samples.filter((s) => s.engine === "llama-server" && s.threads === threads).map((s) => Number(s.extra.wall_ms_per_token))).toFixed(2)} wall`);
    row[side] = { gen_ratio: gen, prompt_ratio: promptRatio, per_round_gen_ratio: perRound(side, threads), wall_ms_per_token: wall, decode_ms_per_token: decode };
    ratios.push(ratio(`threads ${threads}: generation tokens/s, ${side} / llama-server`, gen, { atLeast: 0.95 }), ratio(`threads ${threads}: prompt tokens/s, ${side} / llama-server`, promptRatio));
  }
  if (sides.includes("embedded") && sides.includes("embedded-local")) {
    out(`  local / prebuilt: generation ${(pick("embedded-local", threads, "gen_tps") / pick("embedded", threads, "gen_tps")).toFixed(3)}, prompt ${(pick("embedded-local", threads, "prompt_tps") / pick("embedded", threads, "prompt_tps")).toFixed(3)}, load ${(pick("embedded-local", threads, "load_ms") / pick("embedded", threads, "load_ms")).toFixed(3)}`);
  }
  out();
  summary[`threads_${threads}`] = { ...Object.fromEntries(sides.map((side) => [side, { gen_tps: pick(side, threads, "gen_tps"), prompt_tps: pick(side, threads, "prompt_tps"), load_ms: pick(side, threads, "load_ms"), peak_rss_mb: pick(side, threads, "peak_rss_mb") }])), ratios: row };
}

// What a user gets with `threads: auto` on each side (auto-threads.ts), when those thread counts ran.
const cores = physicalCores();
const serverAuto = llamaServerAutoThreads(cores);
const embeddedAuto = embeddedAutoThreads(cores);
if (threadsList.includes(embeddedAuto) && threadsList.includes(serverAuto)) {
  if (serverAuto !== embeddedAuto && threadsList.includes(embeddedAuto) && pick("llama-server", serverAuto, "gen_tps") < pick("llama-server", embeddedAuto, "gen_tps")) {
    out(`note: llama-server made fewer tokens/s at ${serverAuto} threads than at ${embeddedAuto} in this run: its OpenMP threads spin at barriers, which a busy machine punishes (docs/benchmarks.md)`);
  }
  for (const side of sides.filter((s) => s !== "llama-server")) {
    const atDefaults = pick(side, embeddedAuto, "gen_tps") / pick("llama-server", serverAuto, "gen_tps");
    out(`defaults: ${side} at threads auto (${embeddedAuto}) / llama-server at threads auto (${serverAuto}): generation ${atDefaults.toFixed(3)}  target >= 0.95: ${atDefaults >= 0.95 ? "MET" : "NOT MET"}`);
    summary[`default_${side}`] = { threads: embeddedAuto, server_threads: serverAuto, gen_ratio: atDefaults };
    ratios.push(ratio(`defaults (threads auto): generation tokens/s, ${side} / llama-server`, atDefaults, { atLeast: 0.95 }));
  }
}
out(JSON.stringify({ shape: shapeName, rounds, reps, n_predict: nPredict, prompt: prompt.length, ctx: contextSize, binaries, summary }));
reportRatios("engine", ratios);
