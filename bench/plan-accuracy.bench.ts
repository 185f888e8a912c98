import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { planModels } from "../src/engine/plan/plan-models.js";
import type { ModelPlanEntry } from "../src/engine/plan/plan-types.js";
import { configSchema } from "../src/config/schema.js";
import { ensureFixture, type FixtureKind } from "../test/fixtures/gguf/index.js";
import { ratio as benchRatio, reportRatios, type BenchRatio } from "./bench-results.js";

/**
 * bench:plan-accuracy — what `local-ai plan` estimates against what node-llama-cpp really takes.
 * Each fixture model is planned (embedded engine, threads 2, one sequence, the config's default
 * ctx_size 4096 capped at the trained length), then loaded in a fresh child process with exactly
 * that plan, a 512-token prompt evaluated (so the compute buffers are touched), and the process's
 * memory read from /proc/self/status (BENCH_PLAN_LARGE=1 adds a 0.5B-shaped model): RssFile growth is the mmapped weights, RssAnon growth the
 * KV cache, compute and output buffers (and any repacked weights). Prints measured/estimated
 * ratios; the estimate should be at or a little above 1.0x of reality. See docs/benchmarks.md.
 */
const SELF = fileURLToPath(import.meta.url);
const MiB = 1024 * 1024;

interface Measured {
  model_size: number;
  state_size: number;
  rss_file_delta: number;
  rss_anon_delta: number;
  rss_delta: number;
  ctx_anon_delta: number;
  vram_used: number;
}

function status(): { rss: number; anon: number; file: number } {
  const text = readFileSync("/proc/self/status", "utf8");
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? "0") * 1024;
  return { rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") };
}

/** Child: load the model with the plan and measure. argv: --measure <path> <gpuLayers> <ctxSize> <threads>. */
async function measure(path: string, gpuLayers: number, contextSize: number, threads: number): Promise<Measured> {
  const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
  const llama = await getLlama({ build: "never", gpu: "auto", progressLogs: false, logLevel: LlamaLogLevel.error });
  const vram0 = (await llama.getVramState()).used;
  const before = status();
  const model = await llama.loadModel({ modelPath: path, gpuLayers });
  const loaded = status();
  const context = await model.createContext({ contextSize, sequences: 1, threads });
  const sequence = context.getSequence();
  // 512 ordinary tokens: one full batch, so every compute buffer is used at its planned size.
  const words = "the local agent reads a file and writes a line of text to the model ";
  let tokens = model.tokenize(words.repeat(64));
  while (tokens.length < 512) tokens = [...tokens, ...tokens];
  await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(0, Math.min(512, contextSize - 8)));
  const after = status();
  const result: Measured = {
    model_size: model.size,
    state_size: context.stateSize,
    rss_file_delta: after.file - before.file,
    rss_anon_delta: after.anon - before.anon,
    rss_delta: after.rss - before.rss,
    ctx_anon_delta: after.anon - loaded.anon,
    vram_used: (await llama.getVramState()).used - vram0,
  };
  await context.dispose();
  await model.dispose();
  await llama.dispose();
  return result;
}

function runChild(path: string, plan: NonNullable<ModelPlanEntry["plan"]>): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SELF, "--measure", path, String(plan.gpuLayers), String(plan.ctxSize), String(plan.threads)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as Measured) : reject(new Error(`measure child exited ${code}`))));
  });
}

const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;
const ratio = (measured: number, estimated: number): string => (estimated > 0 ? `${(measured / estimated).toFixed(2)}x` : "n/a");

async function main(): Promise<void> {
  const fixtures: Array<[string, FixtureKind, object | undefined]> = [
    ["tiny", "tiny", undefined],
    ["demo", "demo", undefined],
    ["bench-small", "bench", { shape: "small" }],
  ];
  // ~0.45 GB, written once into the fixture cache (a minute or so): BENCH_PLAN_LARGE=1.
  if (process.env.BENCH_PLAN_LARGE === "1") fixtures.push(["bench-0.5b", "bench", { shape: "0.5b" }]);
  const models: Record<string, unknown> = {};
  for (const [name, kind, opts] of fixtures) {
    models[name] = { path: await ensureFixture(kind, opts as never), threads: 2, parallel: 1 };
  }
  const config = configSchema.parse({ llama: { models } });
  const report = await planModels(config, {});
  process.stdout.write(`machine: ${report.hardware.summary}\n\n`);
  const ratios: BenchRatio[] = [];
  for (const entry of report.models) {
    const plan = entry.plan;
    const path = config.llama.models[entry.name]?.path;
    if (plan === undefined || path === null || path === undefined) {
      process.stdout.write(`${entry.name}: not planned: ${entry.error?.message ?? "?"}\n`);
      continue;
    }
    const m = await runChild(path, plan);
    const e = plan.estimates;
    const measuredContext = m.ctx_anon_delta;
    process.stdout.write(
      [
        `${entry.name}: ${plan.gpuLayers}/${plan.totalLayers} layers on GPU, ctx ${plan.ctxSize}, threads ${plan.threads}`,
        `  weights  estimated ${mib(e.weightsBytes)}  node-llama-cpp model.size ${mib(m.model_size)} (${ratio(m.model_size, e.weightsBytes)})  RssFile+ ${mib(m.rss_file_delta)}`,
        `  context  estimated ${mib(e.kvCacheBytes + e.computeBytes)} (KV ${mib(e.kvCacheBytes)} + compute ${mib(e.computeBytes)})  measured RssAnon+ ${mib(measuredContext)} (${ratio(measuredContext, e.kvCacheBytes + e.computeBytes)})  state size ${mib(m.state_size)}`,
        `  total    estimated ${mib(e.totalBytes)}  measured RSS+ ${mib(m.rss_delta)} (${ratio(m.rss_delta, e.totalBytes)})  VRAM+ ${mib(m.vram_used)}`,
        "",
      ].join("\n"),
    );
    // The estimate should be at or a little above what is measured: measured / estimated <= 1.
    if (e.totalBytes > 0) ratios.push(benchRatio(`${entry.name}: measured / estimated memory`, m.rss_delta / e.totalBytes, { atMost: 1 }));
  }
  reportRatios("plan", ratios);
}

if (process.argv[2] === "--measure") {
  const [path, gpuLayers, ctxSize, threads] = process.argv.slice(3);
  const result = await measure(path ?? "", Number(gpuLayers), Number(ctxSize), Number(threads));
  process.stdout.write(JSON.stringify(result));
} else {
  await main();
}
