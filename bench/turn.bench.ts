import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { modelSchema } from "../src/config/schema.js";
import type { GenerateRequest } from "../src/engine/chat-types.js";
import { EmbeddedEngine } from "../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../src/engine/embedded/llama-runtime.js";
import { createLogger } from "../src/logging/create-logger.js";
import { createStore } from "../src/store/create-store.js";
import type { Checkpoint } from "../src/store/store-types.js";
import { ensureFixture } from "../test/fixtures/gguf/index.js";
import { quartiles, ratio, reportRatios } from "./bench-results.js";
import { directTurn, generateRequest, mainThreadCpuNs, turnSample, type TurnSample as EngineTurnSample } from "./http-turns.js";

/**
 * bench:turn — one chat turn through `local-ai serve-stdio` (the built CLI as a child process,
 * embedded engine, NDJSON over pipes) against the same generation called directly on an
 * EmbeddedEngine in this process, same model, same config, same run: tokens/s, time to first
 * token, and cancel latency. Rounds are interleaved (the order alternates) and medians are
 * printed with the ratios. See docs/benchmarks.md.
 *
 * Env: BENCH_ROUNDS (25), BENCH_CANCEL_ROUNDS (9), BENCH_MAX_TOKENS (256), BENCH_CANCEL_AFTER
 * (2 chunks: one merge window into the stream at the default stdio.coalesce_ms; direct: the
 * second token),
 * BENCH_TURN_MODEL=tiny|small (tiny: the seeded tiny model; small: the 84M bench model, to see
 * the same fixed per-token cost against a realistic decode time), BENCH_TURN_PROFILE=<dir>: run
 * the CLI with --cpu-prof into that folder. BENCH_COALESCE_MS=<ms>: stdio.coalesce_ms for the CLI
 * (unset: the default; 0: one llm_chunk per engine chunk).
 */

const rounds = Number(process.env.BENCH_ROUNDS ?? "25");
const cancelRounds = Number(process.env.BENCH_CANCEL_ROUNDS ?? "9");
const maxTokens = Number(process.env.BENCH_MAX_TOKENS ?? "256");
const cancelAfter = Number(process.env.BENCH_CANCEL_AFTER ?? "2");
const profileDir = process.env.BENCH_TURN_PROFILE;
const coalesceMs = process.env.BENCH_COALESCE_MS;
const SYSTEM_PROMPT = "You are a helpful assistant.";
const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

const out = (line = ""): void => void process.stdout.write(`${line}\n`);

function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** serve-stdio adds what only the CLI side can measure. */
interface TurnSample extends EngineTurnSample {
  /** CLI only: on-CPU ms of this process's main thread (reading and parsing the lines), per output token. */
  reader_cpu_per_token_ms?: number;
  /** CLI only: event arrival times after the chat line was written. */
  layers?: Record<string, number>;
}

interface CancelSample {
  /** cancel line written / abort() -> `cancelled` error read / iterator threw (ms). */
  cancel_ms: number;
  /** llm_chunk events (text chunks) read after the cancel was written (abort() was called). */
  chunks_after: number;
  /** CLI only: cancel line written -> the cancel request's own result read. */
  cancel_result_ms?: number;
}

// ------------------------------------------------------------------------------------- CLI side

type Line = Record<string, unknown> & { id: unknown; type: string; event?: string };

class Cli {
  readonly child: ChildProcessWithoutNullStreams;
  private partial = "";
  private stderr = "";
  private readonly listeners = new Set<(line: Line, at: number) => void>();
  readonly exited: Promise<number | null>;

  constructor(configPath: string, cwd: string) {
    const nodeArgs = profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];
    this.child = spawn(process.execPath, [...nodeArgs, CLI, "serve-stdio", "--config", configPath], {
      cwd,
      env: { ...process.env, LOCAL_AI_LOG_LEVEL: "warn" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout.setEncoding("utf8");
    this.child.stderr.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => {
      const at = performance.now();
      const parts = (this.partial + chunk).split("\n");
      this.partial = parts.pop() ?? "";
      for (const text of parts) {
        const line = JSON.parse(text) as Line;
        for (const listener of [...this.listeners]) listener(line, at);
      }
    });
    this.child.stderr.on("data", (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4000)));
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
  }

  send(message: unknown): number {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
    return performance.now();
  }

  /** Calls `onLine` for every line until it returns true; rejects after timeoutMs. */
  until(onLine: (line: Line, at: number) => boolean, timeoutMs = 60_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`timed out; stderr: ${this.stderr}`));
      }, timeoutMs);
      const listener = (line: Line, at: number): void => {
        if (onLine(line, at)) {
          clearTimeout(timer);
          this.listeners.delete(listener);
          resolve();
        }
      };
      this.listeners.add(listener);
    });
  }

  async chat(id: string, params: Record<string, unknown>): Promise<TurnSample> {
    const seen: Record<string, number> = {};
    let first = 0;
    let last = 0;
    let chunks = 0;
    let outputTokens = Number.NaN;
    let inputTokens = Number.NaN;
    let sent = 0;
    let done = 0;
    let failure: Line | null = null;
    const finished = this.until((line, at) => {
      if (line.id !== id) return false;
      if (line.type === "event") {
        const name = String(line.event);
        if (seen[name] === undefined) seen[name] = at - sent;
        if (name === "llm_chunk") {
          if (chunks === 0) first = at;
          last = at;
          chunks++;
        } else if (name === "usage") {
          outputTokens = Number(line.output_tokens);
          inputTokens = Number(line.input_tokens);
        }
        return false;
      }
      if (line.type === "error") failure = line;
      done = at;
      return true;
    });
    const cliCpu = mainThreadCpuNs(this.child.pid!);
    const ownCpu = mainThreadCpuNs(process.pid);
    sent = this.send({ id, method: "chat", params });
    await finished;
    const cliCpuMs = (mainThreadCpuNs(this.child.pid!) - cliCpu) / 1e6;
    const ownCpuMs = (mainThreadCpuNs(process.pid) - ownCpu) / 1e6;
    if (failure) throw new Error(`chat ${id} failed: ${JSON.stringify(failure)}`);
    return {
      ...turnSample({ cpuMs: cliCpuMs, sent, first, last, done, outputTokens, inputTokens, chunks }),
      reader_cpu_per_token_ms: ownCpuMs / outputTokens,
      layers: seen,
    };
  }

  async cancelDuring(id: string, params: Record<string, unknown>): Promise<CancelSample> {
    let chunks = 0;
    let cancelAt = 0;
    let afterCancel = 0;
    let cancelledAt = 0;
    let cancelResultAt = 0;
    const cancelId = `${id}-cancel`;
    let code = "";
    const finished = this.until((line, at) => {
      if (line.id === cancelId && line.type === "result") cancelResultAt = at;
      if (line.id !== id) return cancelledAt !== 0 && cancelResultAt !== 0;
      if (line.type === "event" && line.event === "llm_chunk") {
        chunks++;
        if (cancelAt !== 0) afterCancel++;
        else if (chunks === cancelAfter) cancelAt = this.send({ id: cancelId, method: "cancel", params: { request_id: id } });
        return false;
      }
      if (line.type === "error" || line.type === "result") {
        code = String(line.type === "error" ? line.code : "result");
        cancelledAt = at;
      }
      // A turn that ended before the cancel was sent (fewer chunks than BENCH_CANCEL_AFTER) has no cancel result to wait for.
      return cancelledAt !== 0 && (cancelResultAt !== 0 || cancelAt === 0);
    });
    this.send({ id, method: "chat", params });
    await finished;
    if (code !== "cancelled") throw new Error(`chat ${id} ended with ${code}, not cancelled (cancel sent: ${cancelAt !== 0})`);
    return { cancel_ms: cancelledAt - cancelAt, chunks_after: afterCancel, cancel_result_ms: cancelResultAt - cancelAt };
  }

  /** A `ping` round trip: stdin line -> dispatch -> stdout line, the protocol floor. */
  async ping(id: string): Promise<number> {
    let at = 0;
    const answered = this.until((line, when) => {
      if (line.id !== id) return false;
      at = when;
      return true;
    });
    const sent = this.send({ id, method: "ping" });
    await answered;
    return at - sent;
  }

  async shutdown(): Promise<void> {
    this.send({ id: "bye", method: "shutdown" });
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

// ----------------------------------------------------------------------------------- direct side

function request(input: string, signal?: AbortSignal): GenerateRequest {
  return { ...generateRequest(SYSTEM_PROMPT, input, maxTokens), ...(signal ? { signal } : {}) };
}

const direct = (engine: EmbeddedEngine, input: string): Promise<TurnSample> => directTurn(engine, request(input));

async function directCancel(engine: EmbeddedEngine, input: string): Promise<CancelSample> {
  const controller = new AbortController();
  let chunks = 0;
  let abortAt = 0;
  let afterAbort = 0;
  try {
    for await (const chunk of engine.generate(request(input, controller.signal))) {
      if (chunk.type !== "text") continue;
      chunks++;
      if (abortAt !== 0) afterAbort++;
      else if (chunks === cancelAfter) {
        abortAt = performance.now();
        controller.abort("bench cancel");
      }
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== "cancelled") throw error;
    return { cancel_ms: performance.now() - abortAt, chunks_after: afterAbort };
  }
  throw new Error("direct generation finished without being cancelled");
}

// --------------------------------------------------------------------- where the first token waits

interface StoreLayers {
  /** withSessionLock until fn runs: lock file create (+ session/user folders, fsynced, when new). */
  lock_ms: number;
  /** readCheckpoint + writeCheckpoint("running"): temp file, fsync, rename, fsync folder. */
  checkpoint_ms: number;
  /** memory.ensureUser + loadHistory + memory.search. */
  memory_history_ms: number;
}

/**
 * The store work SessionRunner does before the model step starts (session-runner.ts: lock,
 * checkpoint, then memory and history), timed in this process on the same file system, to
 * attribute the serve-stdio first-token difference. `kind` says which folders already exist.
 */
async function storeLayers(dataDir: string, kind: "new user" | "known user, new session" | "same session, next turn", count: number): Promise<StoreLayers[]> {
  const { sessions, memory } = createStore(dataDir);
  const samples: StoreLayers[] = [];
  const warmUser = "layers_known";
  await sessions.withSessionLock(warmUser, "warm", async () => sessions.clearCheckpoint(warmUser, "warm"));
  for (let i = 0; i < count; i++) {
    const user = kind === "new user" ? `layers_new_${i}` : warmUser;
    const session = kind === "same session, next turn" ? "warm" : `layers_s${i}`;
    const input = "Tell me a long story";
    const checkpoint: Checkpoint = {
      version: 1, trace_id: "0123456789abcdef", agent: "assistant", user_input: input, messages: [{ role: "user", content: input }],
      step: 0, parse_errors: 0, status: "running", pending: null, updated_at: new Date().toISOString(),
    };
    const t0 = performance.now();
    let t1 = 0;
    let t2 = 0;
    let t3 = 0;
    await sessions.withSessionLock(user, session, async () => {
      t1 = performance.now();
      await sessions.readCheckpoint(user, session);
      await sessions.writeCheckpoint(user, session, checkpoint);
      t2 = performance.now();
      await memory.ensureUser(user);
      await sessions.loadHistory(user, session);
      memory.search(user, input, 256);
      t3 = performance.now();
      await sessions.clearCheckpoint(user, session);
    });
    samples.push({ lock_ms: t1 - t0, checkpoint_ms: t2 - t1, memory_history_ms: t3 - t2 });
  }
  return samples;
}

// ------------------------------------------------------------------------------------------ main

const modelName = process.env.BENCH_TURN_MODEL ?? "tiny";
if (modelName !== "tiny" && modelName !== "small" && modelName !== "0.5b") throw new Error(`BENCH_TURN_MODEL must be tiny, small or 0.5b, not ${modelName}`);
const modelPath = modelName === "tiny" ? await ensureFixture("tiny", { seed: 3 }) : await ensureFixture("bench", { shape: modelName });
const dir = await mkdtemp(path.join(tmpdir(), "local-ai-bench-turn-"));
const configPath = path.join(dir, "config.yaml");
await writeFile(
  configPath,
  [
    "app:",
    `  data_dir: ${JSON.stringify(path.join(dir, "data"))}`,
    // Unset: the default window; 0 shows the per-token cost without merging.
    ...(coalesceMs === undefined ? [] : ["stdio:", `  coalesce_ms: ${coalesceMs}`]),
    "llama:",
    "  models:",
    "    default:",
    `      path: ${JSON.stringify(modelPath)}`,
    "      threads: 1",
    "      ctx_size: 4096",
    "agents:",
    "  assistant:",
    "    temperature: 0",
    `    max_tokens: ${maxTokens}`,
    "",
  ].join("\n"),
);

// The same model config as the CLI parses from that file (defaults included: parallel 2, gpu auto).
const modelConfig = modelSchema.parse({ path: modelPath, threads: 1, ctx_size: 4096 });
const logger = createLogger({ level: "warn", pretty: false });
const runtime = new LlamaRuntime(logger);
const engine = new EmbeddedEngine("default", modelConfig, { llama: runtime, logger, parallel: modelConfig.parallel });
const cli = new Cli(configPath, dir);

out(`bench:turn  model: ${modelName === "small" ? 'bench "small" (84M params, q8_0)' : "tiny (seed 3)"} ${modelPath}`);
out(`threads 1, ctx 4096, parallel ${modelConfig.parallel}, temperature 0, max_tokens ${maxTokens}; ${rounds} rounds, ${cancelRounds} cancel rounds (cancel after ${cancelAfter} chunks)`);
out();

// Warm-up (not measured): model load on both sides, the first turn's one-time costs.
await cli.chat("warm", { user_id: "bench_warm", input: "Hello there" });
await direct(engine, "Hello there");

const pings: number[] = [];
for (let i = 0; i < 15; i++) pings.push(await cli.ping(`ping${i}`));

const cliTurns: TurnSample[] = [];
const directTurns: TurnSample[] = [];
for (let round = 0; round < rounds; round++) {
  // Same input on both sides; a fresh user each turn so memory adds no snippets to the prompt.
  const input = `Tell me a long story, part ${round + 1}`;
  const runCli = async (): Promise<void> => void cliTurns.push(await cli.chat(`t${round}`, { user_id: `bench_u${round}`, input }));
  const runDirect = async (): Promise<void> => void directTurns.push(await direct(engine, input));
  if (round % 2 === 0) {
    await runCli();
    await runDirect();
  } else {
    await runDirect();
    await runCli();
  }
  const c = cliTurns.at(-1)!;
  const d = directTurns.at(-1)!;
  out(
    `round ${round + 1}: serve-stdio ${c.stream_tps.toFixed(0)} tok/s stream, ${c.e2e_tps.toFixed(0)} tok/s e2e, first token ${c.ttft_ms.toFixed(2)} ms, ${c.chunks} chunks/${c.output_tokens} tokens | direct ${d.stream_tps.toFixed(0)} tok/s stream, ${d.e2e_tps.toFixed(0)} tok/s e2e, first token ${d.ttft_ms.toFixed(2)} ms, ${d.chunks} chunks/${d.output_tokens} tokens`,
  );
}

const cliCancels: CancelSample[] = [];
const directCancels: CancelSample[] = [];
for (let round = 0; round < cancelRounds; round++) {
  const input = `Tell me everything, take ${round + 1}`;
  const runCli = async (): Promise<void> => void cliCancels.push(await cli.cancelDuring(`c${round}`, { user_id: `bench_c${round}`, input }));
  const runDirect = async (): Promise<void> => void directCancels.push(await directCancel(engine, input));
  if (round % 2 === 0) {
    await runCli();
    await runDirect();
  } else {
    await runDirect();
    await runCli();
  }
  const c = cliCancels.at(-1)!;
  const d = directCancels.at(-1)!;
  out(
    `cancel ${round + 1}: serve-stdio ${c.cancel_ms.toFixed(2)} ms to "cancelled" (cancel result ${c.cancel_result_ms?.toFixed(2)} ms), ${c.chunks_after} llm_chunk after | direct ${d.cancel_ms.toFixed(2)} ms to throw, ${d.chunks_after} chunks after`,
  );
}

await cli.shutdown();
await engine.close();
await runtime.dispose();

const layerKinds = ["new user", "known user, new session", "same session, next turn"] as const;
const storeTimes = new Map<string, StoreLayers[]>();
for (const kind of layerKinds) storeTimes.set(kind, await storeLayers(path.join(dir, "layers"), kind, Math.max(rounds, 9)));
await rm(dir, { recursive: true, force: true });

const m = (list: TurnSample[], key: Exclude<keyof TurnSample, "layers">): number => median(list.map((s) => s[key] ?? Number.NaN));
const streamRatio = m(cliTurns, "stream_tps") / m(directTurns, "stream_tps");
const e2eRatio = m(cliTurns, "e2e_tps") / m(directTurns, "e2e_tps");
const ttftDiff = m(cliTurns, "ttft_ms") - m(directTurns, "ttft_ms");
const cancelMs = median(cliCancels.map((s) => s.cancel_ms));
// Each round pairs the two sides back to back: the spread of these per-round ratios is the noise.
const roundRatios = quartiles(cliTurns.map((c, i) => c.stream_tps / (directTurns[i]?.stream_tps ?? Number.NaN)));
const layerNames = ["run_start", "memory_start", "llm_start", "llm_chunk", "usage", "llm_done", "final"];
const layers = Object.fromEntries(layerNames.map((name) => [name, median(cliTurns.map((s) => s.layers?.[name] ?? Number.NaN))]));

out();
out(`medians of ${rounds} rounds                 serve-stdio      direct   ratio / difference`);
out(`  stream tok/s (first->last chunk)   ${m(cliTurns, "stream_tps").toFixed(0).padStart(11)} ${m(directTurns, "stream_tps").toFixed(0).padStart(11)}   ${streamRatio.toFixed(3)} (overhead ${((1 - streamRatio) * 100).toFixed(1)}%)`);
out(`  per-round stream ratio quartiles    q1 ${roundRatios.q1.toFixed(3)}  median ${roundRatios.median.toFixed(3)}  q3 ${roundRatios.q3.toFixed(3)}`);
out(`  end-to-end tok/s (request->result) ${m(cliTurns, "e2e_tps").toFixed(0).padStart(11)} ${m(directTurns, "e2e_tps").toFixed(0).padStart(11)}   ${e2eRatio.toFixed(3)} (overhead ${((1 - e2eRatio) * 100).toFixed(1)}%)`);
out(`  time to first token ms             ${m(cliTurns, "ttft_ms").toFixed(2).padStart(11)} ${m(directTurns, "ttft_ms").toFixed(2).padStart(11)}   +${ttftDiff.toFixed(2)} ms`);
out(`  text chunks per turn               ${m(cliTurns, "chunks").toFixed(0).padStart(11)} ${m(directTurns, "chunks").toFixed(0).padStart(11)}`);
out(`  output tokens (usage)              ${m(cliTurns, "output_tokens").toFixed(0).padStart(11)} ${m(directTurns, "output_tokens").toFixed(0).padStart(11)}`);
out(`  input tokens (usage)               ${m(cliTurns, "input_tokens").toFixed(0).padStart(11)} ${m(directTurns, "input_tokens").toFixed(0).padStart(11)}`);
out(`  wall ms per token (stream)         ${(1000 / m(cliTurns, "stream_tps")).toFixed(3).padStart(11)} ${(1000 / m(directTurns, "stream_tps")).toFixed(3).padStart(11)}   +${(1000 / m(cliTurns, "stream_tps") - 1000 / m(directTurns, "stream_tps")).toFixed(3)} ms`);
out(`  engine main-thread CPU ms/token    ${m(cliTurns, "engine_js_cpu_per_token_ms").toFixed(3).padStart(11)} ${m(directTurns, "engine_js_cpu_per_token_ms").toFixed(3).padStart(11)}   +${(m(cliTurns, "engine_js_cpu_per_token_ms") - m(directTurns, "engine_js_cpu_per_token_ms")).toFixed(3)} ms (serve-stdio: the CLI's main thread; direct: this process's)`);
out(`  reader main-thread CPU ms/token    ${m(cliTurns, "reader_cpu_per_token_ms").toFixed(3).padStart(11)}           -   (this process reading the CLI's stdout)`);
out(`  cancel -> cancelled ms             ${cancelMs.toFixed(2).padStart(11)} ${median(directCancels.map((s) => s.cancel_ms)).toFixed(2).padStart(11)}`);
out(`  chunks after cancel                ${median(cliCancels.map((s) => s.chunks_after)).toFixed(0).padStart(11)} ${median(directCancels.map((s) => s.chunks_after)).toFixed(0).padStart(11)}`);
out(`  serve-stdio event arrival after the chat line (ms): ${layerNames.map((n) => `${n} ${layers[n]?.toFixed(2)}`).join(", ")}`);
out(`  ping round trip (stdin -> result line) ms: ${median(pings).toFixed(2)}`);
out("  store work before the model step (in process, same file system; medians ms):");
for (const kind of layerKinds) {
  const list = storeTimes.get(kind) ?? [];
  const lock = median(list.map((l) => l.lock_ms));
  const checkpoint = median(list.map((l) => l.checkpoint_ms));
  const memoryHistory = median(list.map((l) => l.memory_history_ms));
  out(`    ${kind.padEnd(26)} lock ${lock.toFixed(2)}  checkpoint ${checkpoint.toFixed(2)}  memory+history ${memoryHistory.toFixed(2)}  = ${(lock + checkpoint + memoryHistory).toFixed(2)}`);
}
out();
out(`target: tokens/s overhead < 3%: ${1 - streamRatio < 0.03 ? "MET" : "NOT MET"} (stream ${((1 - streamRatio) * 100).toFixed(1)}%, end-to-end ${((1 - e2eRatio) * 100).toFixed(1)}%)`);
out(`target: per-round stream ratio median >= 0.97: ${roundRatios.median >= 0.97 ? "MET" : "NOT MET"} (${roundRatios.median.toFixed(3)}; one run of 25 rounds moves by about +-0.03, docs/benchmarks.md)`);
out(`target: < 5 ms added to first token: ${ttftDiff < 5 ? "MET" : "NOT MET"} (+${ttftDiff.toFixed(2)} ms)`);
out(`target: cancel < 10 ms: ${cancelMs < 10 ? "MET" : "NOT MET"} (${cancelMs.toFixed(2)} ms)`);
reportRatios("turn", [
  ratio("stream tokens/s, serve-stdio / engine direct", streamRatio, { atLeast: 0.97 }),
  ratio("end-to-end tokens/s, serve-stdio / engine direct", e2eRatio),
]);
out(JSON.stringify({ rounds, cancelRounds, maxTokens, stream_ratio: streamRatio, round_ratios: roundRatios, e2e_ratio: e2eRatio, ttft_added_ms: ttftDiff, cancel_ms: cancelMs, layers, ping_ms: median(pings), cli: cliTurns, direct: directTurns, cliCancels, directCancels }));
