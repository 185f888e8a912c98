// Child process of bench/engine.bench.ts: node-llama-cpp alone in a process, so its peak RSS is its
// own. Loads the model the way the embedded engine does (LlamaRuntime: the binary asked for, gpu auto),
// then answers "run" messages: evaluate a fixed prompt of token ids and generate a fixed number of
// tokens greedily through LlamaContextSequence.evaluate, ignoring EOS (the loop never stops on it).
//
// Timing definitions match llama-server's own `timings` (tools/server/server-common.h):
//   prompt_ms    = evaluate() called -> first generated token sampled (prompt decode + 1 sample)
//   predicted_ms = first token -> last token; predicted_per_second = (n - 1) / predicted_ms
//                  (the first token comes from the prompt's logits: it costs no decode step)
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { LlamaRuntime } from "../src/engine/embedded/llama-runtime.js";
import { embeddedBinaryOf, type EmbeddedBinaryChoice } from "../src/engine/llama-binary.js";
import { createLogger } from "../src/logging/create-logger.js";

export interface WorkerArgs {
  modelPath: string;
  contextSize: number;
  threads: number;
  /** `auto` loads the local build of `npm run build:embedded` when there is one. */
  binary: EmbeddedBinaryChoice;
}

/** maxMs: stop generating early after this long (a guard for an oversubscribed machine). */
export type ToWorker = { type: "run"; prompt: number[]; nPredict: number; maxMs: number } | { type: "exit" };

export type FromWorker =
  | {
      type: "ready";
      /** Process start -> this module running (Node boot, our imports). */
      boot_ms: number;
      /** import node-llama-cpp + getLlama (backend load), as LlamaRuntime does it. */
      runtime_ms: number;
      model_ms: number;
      context_ms: number;
      /** maxRSS right after getLlama, before the model: Node + the addon. */
      rss_before_model_kb: number;
      threads: number;
      batch_size: number;
      flash_attention: string;
      cpu_backend: string;
      /** The binary that loaded: local (npm run build:embedded) or prebuilt, and whether it has OpenMP. */
      binary: "local" | "prebuilt";
      openmp: boolean;
    }
  | {
      type: "result";
      prompt_n: number;
      prompt_ms: number;
      predicted_n: number;
      predicted_ms: number;
      total_ms: number;
      /** On-CPU time of the main (JS) thread from the first to the last token (schedstat). */
      main_thread_cpu_ms: number;
      /** llama.cpp's own counters for this run (llama_perf_context): time inside llama_decode. */
      native: { prompt_eval_ms: number; prompt_eval_tokens: number; eval_ms: number; eval_runs: number } | null;
    }
  | { type: "bye"; max_rss_kb: number }
  | { type: "error"; message: string };

function send(message: FromWorker): Promise<void> {
  return new Promise((resolve) => process.send?.(message, undefined, undefined, () => resolve()));
}

/** Which prebuilt libggml-cpu-<variant>.so the backend loader picked; a local build has one plain libggml-cpu.so (-march=native). */
function cpuBackend(): string {
  try {
    const maps = readFileSync("/proc/self/maps", "utf8");
    const match = /libggml-cpu-([A-Za-z0-9_]+)\.so/.exec(maps);
    return match?.[1] ?? "native (no libggml-cpu-<variant>.so mapped)";
  } catch {
    return "unknown";
  }
}

/**
 * llama.cpp's per-context perf counters, printed (and reset) by printTimings through the log
 * callback at info level. The level is raised only around the call; the lines are captured.
 */
const perfLines: string[] = [];
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** node-llama-cpp's LlamaLogLevel values, read from the module LlamaRuntime imported. */
let logLevels: { info: Llama["logLevel"]; warn: Llama["logLevel"] } | null = null;

async function nativeTimings(llama: Llama, context: LlamaContext): Promise<Extract<FromWorker, { type: "result" }>["native"]> {
  perfLines.length = 0;
  if (logLevels === null) return null;
  llama.logLevel = logLevels.info;
  await context.printTimings();
  // Log lines reach JS through a thread-safe function: give them a moment to arrive.
  for (let i = 0; i < 50 && !perfLines.some((line) => line.includes("total time")); i++) await sleep(5);
  llama.logLevel = logLevels.warn;
  const text = perfLines.join("\n");
  const prompt = /prompt eval time =\s*([\d.]+) ms \/\s*(\d+) tokens/.exec(text);
  const evalRuns = /\seval time =\s*([\d.]+) ms \/\s*(\d+) runs/.exec(text);
  if (!prompt || !evalRuns) return null;
  return { prompt_eval_ms: Number(prompt[1]), prompt_eval_tokens: Number(prompt[2]), eval_ms: Number(evalRuns[1]), eval_runs: Number(evalRuns[2]) };
}

/** Nanoseconds the main thread has been on a CPU (/proc/self/task/<pid>/schedstat), NaN elsewhere. */
function mainThreadCpuNs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]);
  } catch {
    return Number.NaN;
  }
}

async function generate(llama: Llama, context: LlamaContext, sequence: LlamaContextSequence, prompt: number[], nPredict: number, maxMs: number): Promise<FromWorker> {
  await sequence.clearHistory();
  await nativeTimings(llama, context); // resets the counters
  const started = performance.now();
  let first = 0;
  let last = 0;
  let count = 0;
  let cpuAtFirst = 0;
  for await (const token of sequence.evaluate(prompt as Token[], { temperature: 0 })) {
    void token;
    last = performance.now();
    if (count === 0) {
      first = last;
      cpuAtFirst = mainThreadCpuNs();
    }
    count++;
    if (count >= nPredict || last - first > maxMs) break;
  }
  const mainThreadCpuMs = (mainThreadCpuNs() - cpuAtFirst) / 1e6;
  const native = await nativeTimings(llama, context);
  return {
    type: "result",
    prompt_n: prompt.length,
    prompt_ms: first - started,
    predicted_n: count,
    predicted_ms: last - first,
    total_ms: last - started,
    main_thread_cpu_ms: mainThreadCpuMs,
    native,
  };
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? "{}") as WorkerArgs;
  // Debug level so that llama.cpp's info lines (mapped to debug by LlamaRuntime) reach us: perf
  // lines are kept, warnings and errors go on to stderr, the rest is dropped.
  const logger = createLogger({
    level: "debug",
    destination: {
      write: (line: string) => {
        if (line.includes("llama_perf_context_print")) perfLines.push((JSON.parse(line) as { msg: string }).msg);
        else if (/"level":(4|5|6)0/.test(line)) process.stderr.write(line);
      },
    },
  });
  const t0 = performance.now();
  const runtime = new LlamaRuntime(logger, args.binary);
  const { llama, module } = await runtime.get();
  const t1 = performance.now();
  logLevels = { info: module.LlamaLogLevel.info, warn: module.LlamaLogLevel.warn };
  const rssBeforeModel = process.resourceUsage().maxRSS;
  const model: LlamaModel = await llama.loadModel({ modelPath: args.modelPath, gpuLayers: "auto" });
  const t2 = performance.now();
  const context: LlamaContext = await model.createContext({ contextSize: args.contextSize, sequences: 1, threads: args.threads, performanceTracking: true });
  const t3 = performance.now();
  const sequence = context.getSequence();
  const binary = embeddedBinaryOf(llama);
  await send({
    type: "ready",
    boot_ms: t0,
    runtime_ms: t1 - t0,
    model_ms: t2 - t1,
    context_ms: t3 - t2,
    rss_before_model_kb: rssBeforeModel,
    threads: context.idealThreads,
    batch_size: context.batchSize,
    flash_attention: String(context.flashAttention),
    cpu_backend: cpuBackend(),
    binary: binary.kind,
    openmp: binary.openmp,
  });
  process.on("message", (message: ToWorker) => {
    void (async () => {
      try {
        if (message.type === "run") {
          await send(await generate(llama, context, sequence, message.prompt, message.nPredict, message.maxMs));
        } else {
          await send({ type: "bye", max_rss_kb: process.resourceUsage().maxRSS });
          await context.dispose();
          await model.dispose();
          await runtime.dispose();
          process.exit(0);
        }
      } catch (error) {
        await send({ type: "error", message: error instanceof Error ? error.message : String(error) });
        process.exit(1);
      }
    })();
  });
}

main().catch(async (error: unknown) => {
  await send({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
