import { Agent } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { LlamaContext, LlamaContextSequence, LlamaModel } from "node-llama-cpp";
import type { GenerateRequest } from "../src/engine/chat-types.js";
import { LlamaRuntime } from "../src/engine/embedded/llama-runtime.js";
import { generateOnSequence } from "../src/engine/embedded/sequence-generation.js";
import { toChatHistory, withOpenModelTurn } from "../src/engine/llama/to-chat-history.js";
import { createLogger } from "../src/logging/create-logger.js";
import { ensureFixture } from "../test/fixtures/gguf/index.js";
import { parseSse, startHttpServer, type ChunkLike } from "../test/helpers/http-server.js";
import { LONG_PROMPT_SHAPE, longPromptText } from "../test/helpers/long-prompt.js";
import { readCpuSeconds } from "../test/helpers/proc-stats.js";
import { median, quartiles, ratio, reportRatios } from "./bench-results.js";
import { send } from "./http-turns.js";
import { startStdioCli, type Line } from "./stdio-cli.js";

/**
 * bench:prefill — a long prompt (issue 32) on the bench model with a 32 k context
 * (LONG_PROMPT_SHAPE), in one run:
 *
 * 1. Time to first token of a ~10 k-token prompt through `local-ai serve-stdio` (chat) and
 *    `local-ai serve-http` (chat completions, stream), both the built CLI as a child process on
 *    the embedded engine, against node-llama-cpp reading the same prompt in this process
 *    (LlamaChat.generateResponse with maxTokens 1, same GGUF, threads, context and batch).
 *    Rounds rotate the order of the three; each round has a prompt of its own (nothing cached).
 *    Ratio = direct ms / side ms (1 = no overhead; target >= 0.97).
 * 2. Cancel mid-prompt over serve-stdio: ms from the cancel line to the chat's `cancelled` error
 *    (target: within one chunk of prompt-prefill.ts, whose time part 3 measures), the server's CPU
 *    seconds in the 3 s after, and the retry's cached_input_tokens against the tokens read before.
 * 3. Chunking: prompt throughput of the engine's path (prompt-prefill.ts chunks, then LlamaChat on
 *    the last token: generateOnSequence) against one-shot LlamaChat, in this process, at each of
 *    BENCH_CHUNK_THREADS; with the chunk sizes and times it chose.
 *
 * Env: BENCH_PROMPT_TOKENS (10000), BENCH_ROUNDS (5), BENCH_THREADS (1: part 1 and 2),
 * BENCH_CANCEL_ROUNDS (3), BENCH_CHUNK_THREADS ("1,2"), BENCH_CHUNK_ROUNDS (3),
 * BENCH_PREFILL_PARTS ("ttft,cancel,chunk"). See docs/benchmarks.md, "Long prompts (issue 32)".
 */

const promptTokens = Number(process.env.BENCH_PROMPT_TOKENS ?? "10000");
const rounds = Number(process.env.BENCH_ROUNDS ?? "5");
const threads = Number(process.env.BENCH_THREADS ?? "1");
const cancelRounds = Number(process.env.BENCH_CANCEL_ROUNDS ?? "3");
const chunkThreads = (process.env.BENCH_CHUNK_THREADS ?? "1,2").split(",").map(Number);
const chunkRounds = Number(process.env.BENCH_CHUNK_ROUNDS ?? "3");
const parts = new Set((process.env.BENCH_PREFILL_PARTS ?? "ttft,cancel,chunk").split(","));
/**
 * One process reads the same prompt anywhere from 46 to 62 s on a 2-core machine and keeps that
 * speed for its life (docs/benchmarks.md, "Chunk size against depth"): by default every round of
 * the time-to-first-token part starts fresh servers and a fresh direct context, so rounds average
 * that out instead of measuring one process's luck. BENCH_FRESH_SERVERS=0 keeps them.
 */
const freshServers = process.env.BENCH_FRESH_SERVERS !== "0";
const CTX = 32768;
const SYSTEM_PROMPT = "You are a helpful assistant.";

const out = (line = ""): void => void process.stdout.write(`${line}\n`);
const load = (): string => loadavg().map((n) => n.toFixed(2)).join(" ");
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : "-");

// ---------------------------------------------------------------------------- the servers' side

interface SideTurn {
  ttft_ms: number;
  input_tokens: number;
  cached_tokens: number;
}

/** One chat over serve-stdio; the first token is the step's first text, or its end when there is none. */
async function stdioTurn(cli: ReturnType<typeof startStdioCli>, id: string, input: string): Promise<SideTurn> {
  const { lines, sentAt } = await cli.request({ id, method: "chat", params: { user_id: `u_${id}`, session_id: id, input } });
  const end = lines.at(-1);
  if (end?.line.type !== "result") throw new Error(`chat ${id}: ${JSON.stringify(end?.line)}`);
  const first = lines.find(({ line }) => line.event === "llm_chunk" || line.event === "llm_done");
  const usage = lines.find(({ line }) => line.event === "usage")?.line;
  return { ttft_ms: (first?.at ?? Number.NaN) - sentAt, input_tokens: Number(usage?.input_tokens), cached_tokens: Number(usage?.cached_input_tokens ?? 0) };
}

const agent = new Agent({ keepAlive: true });

/** One streamed chat completion over serve-http; the first token is the first content or finish chunk. */
async function httpTurn(port: number, id: string, input: string): Promise<SideTurn> {
  let partial = "";
  let first = 0;
  let usage: ChunkLike["usage"] = null;
  const onData = (piece: string, at: number): void => {
    const blocks = (partial + piece).split("\n\n");
    partial = blocks.pop() ?? "";
    for (const frame of parseSse(blocks.join("\n\n") + "\n\n")) {
      if (frame.data === "[DONE]" || frame.data === "") continue;
      const chunk = JSON.parse(frame.data) as ChunkLike & { usage?: { prompt_tokens_details?: { cached_tokens?: number } } };
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (first === 0 && (Boolean(choice?.delta?.content) || Boolean(choice?.finish_reason))) first = at;
    }
  };
  const body = { model: "assistant", messages: [{ role: "user", content: input }], stream: true, stream_options: { include_usage: true }, user: `u_${id}`, session_id: id };
  const sent = performance.now();
  const result = await send(agent, port, "POST", "/v1/chat/completions", body, onData);
  if (result.status !== 200 || first === 0) throw new Error(`stream ${id}: HTTP ${result.status} ${result.body.slice(0, 500)}`);
  const cached = (usage as { prompt_tokens_details?: { cached_tokens?: number } } | null)?.prompt_tokens_details?.cached_tokens ?? 0;
  return { ttft_ms: first - sent, input_tokens: Number((usage as ChunkLike["usage"])?.prompt_tokens), cached_tokens: cached };
}

interface CancelSample {
  cancel_ms: number;
  read_before: number;
  total: number;
  cpu_s_after: number;
  retry_cached: number;
  retry_ttft_ms: number;
}

/** A chat cancelled at its first mid-prompt prompt_progress, 3 s of the server's CPU, then the retry of the same session. */
async function cancelRound(cli: ReturnType<typeof startStdioCli>, id: string, input: string): Promise<CancelSample | null> {
  let cancelAt = 0;
  const { lines } = await cli.request({ id, method: "chat", params: { user_id: `u_${id}`, session_id: id, input } }, (line) => {
    if (cancelAt === 0 && line.event === "prompt_progress" && Number(line.processed) > 0 && Number(line.processed) < Number(line.total)) {
      cancelAt = cli.send({ id: `${id}-cancel`, method: "cancel", params: { request_id: id } });
    }
  });
  const end = lines.at(-1)!;
  if (cancelAt === 0 || end.line.type !== "error" || end.line.code !== "cancelled") {
    out(`  cancel ${id}: no cancel mid-prompt (the prompt was read before a progress event came, or the chat ended ${JSON.stringify(end.line).slice(0, 200)})`);
    return null;
  }
  const progress = lines.filter(({ line }) => line.event === "prompt_progress").map(({ line }) => line as Line & { processed: number; total: number });
  const cpuBefore = readCpuSeconds(cli.pid);
  await sleep(3000);
  const cpu = readCpuSeconds(cli.pid) - cpuBefore;
  const retry = await stdioTurn(cli, id, input);
  return {
    cancel_ms: end.at - cancelAt,
    read_before: Math.max(...progress.map((p) => Number(p.processed))),
    total: Number(progress[0]?.total),
    cpu_s_after: cpu,
    retry_cached: retry.cached_tokens,
    retry_ttft_ms: retry.ttft_ms,
  };
}

// ---------------------------------------------------------------------------------- in process

const logger = createLogger({ level: "warn", pretty: false });
const runtime = new LlamaRuntime(logger);
const { llama, module } = await runtime.get();
const modelPath = await ensureFixture("bench", { shape: LONG_PROMPT_SHAPE });
const model: LlamaModel = await llama.loadModel({ modelPath, gpuLayers: "auto" });
const chatWrapper = module.resolveChatWrapper(model);
const contexts = new Map<number, { context: LlamaContext; sequence: LlamaContextSequence }>();

/** The context the engine makes for this model config (embedded-engine.ts: context size, one sequence, threads; batch by default). */
async function sequenceFor(t: number): Promise<LlamaContextSequence> {
  let entry = contexts.get(t);
  if (entry === undefined) {
    const context = await model.createContext({ contextSize: Math.min(CTX, model.trainContextSize), sequences: 1, threads: t });
    entry = { context, sequence: context.getSequence() };
    contexts.set(t, entry);
  }
  await entry.sequence.clearHistory();
  return entry.sequence;
}

const requestOf = (input: string, onPromptProgress?: GenerateRequest["onPromptProgress"]): GenerateRequest => ({
  messages: [
    { role: "system", content: SYSTEM_PROMPT },
    { role: "user", content: input },
  ],
  temperature: 0,
  maxTokens: 1,
  seed: null,
  ...(onPromptProgress === undefined ? {} : { onPromptProgress }),
});

/** One-shot: LlamaChat reads the whole prompt and makes one token. */
async function oneShot(t: number, input: string): Promise<{ ms: number; tokens: number }> {
  const sequence = await sequenceFor(t);
  const chat = new module.LlamaChat({ contextSequence: sequence, chatWrapper, autoDisposeSequence: false });
  try {
    const before = sequence.tokenMeter.getState().usedInputTokens;
    const started = performance.now();
    await chat.generateResponse(withOpenModelTurn(toChatHistory(requestOf(input).messages)), { maxTokens: 1, temperature: 0 });
    return { ms: performance.now() - started, tokens: sequence.tokenMeter.getState().usedInputTokens - before };
  } finally {
    chat.dispose({ disposeSequence: false });
  }
}

/** The engine's path: prompt-prefill.ts's chunks, then LlamaChat on the last token; with each chunk's size and ms. */
async function chunked(t: number, input: string): Promise<{ ms: number; tokens: number; chunks: Array<{ tokens: number; ms: number }> }> {
  const sequence = await sequenceFor(t);
  const marks: Array<{ processed: number; at: number }> = [];
  const request = requestOf(input, (progress) => marks.push({ processed: progress.processed, at: performance.now() }));
  const started = performance.now();
  const result = await generateOnSequence({ sequence, chatWrapper, request, signal: new AbortController().signal, emit: () => undefined, llama: async () => llama });
  const ms = performance.now() - started;
  const usage = result.find((chunk) => chunk.type === "usage");
  const chunks = marks.slice(1).map((mark, i) => ({ tokens: mark.processed - marks[i]!.processed, ms: mark.at - marks[i]!.at }));
  return { ms, tokens: usage?.type === "usage" ? usage.inputTokens : Number.NaN, chunks };
}

// ------------------------------------------------------------------------------------------ main

out(`bench:prefill  model: bench "small" shape, 32 k context (${modelPath})`);
out(`prompt ~${promptTokens} tokens; threads ${threads} (servers and direct), ctx ${CTX}, parallel 1, batch ${(await sequenceFor(threads)).context.batchSize}; ${rounds} rounds, ${cancelRounds} cancel rounds; chunking at threads ${chunkThreads.join(",")}, ${chunkRounds} rounds`);
out(`load average at start (1/5/15 min): ${load()}`);

const dir = await mkdtemp(path.join(tmpdir(), "local-ai-bench-prefill-"));
const modelYaml = ["llama:", "  models:", "    default:", `      path: ${JSON.stringify(modelPath)}`, `      threads: ${threads}`, `      ctx_size: ${CTX}`, "      parallel: 1", "agents:", "  assistant:", "    temperature: 0", "    max_tokens: 1", `    system_prompt: ${JSON.stringify(SYSTEM_PROMPT)}`, ""].join("\n");
await writeFile(path.join(dir, "config.yaml"), [`app:`, `  data_dir: ${JSON.stringify(path.join(dir, "data"))}`, modelYaml].join("\n"));
const needServers = parts.has("ttft") || parts.has("cancel");
let cli = needServers ? startStdioCli(dir) : null;
let http = parts.has("ttft") ? await startHttpServer({ yaml: modelYaml }) : null;

const results: Record<string, unknown> = {};
const ratios = [];
const stdioTurns: SideTurn[] = [];
const httpTurns: SideTurn[] = [];
const directTurns: SideTurn[] = [];
if (cli !== null) await stdioTurn(cli, "warm", "Hello there");
if (parts.has("ttft") && cli !== null && http !== null) {
  // Warm-up (not measured): model loads, first-turn costs.
  await httpTurn(http.port, "warm", "Hello there");
  await oneShot(threads, "Hello there");
  for (let round = 0; round < rounds; round++) {
    if (freshServers && round > 0) {
      await Promise.all([cli.stop(), http.stop()]);
      cli = startStdioCli(dir);
      http = await startHttpServer({ yaml: modelYaml });
      await stdioTurn(cli, `warm${round}`, "Hello there");
      await httpTurn(http.port, `warm${round}`, "Hello there");
      for (const entry of contexts.values()) await entry.context.dispose();
      contexts.clear();
      await oneShot(threads, "Hello there");
    }
    const [stdioCli, httpServer] = [cli, http];
    const input = longPromptText(promptTokens, 100 + round);
    const sides = [
      async (): Promise<void> => void stdioTurns.push(await stdioTurn(stdioCli, `t${round}`, input)),
      async (): Promise<void> => void httpTurns.push(await httpTurn(httpServer.port, `t${round}`, input)),
      async (): Promise<void> => {
        const direct = await oneShot(threads, input);
        directTurns.push({ ttft_ms: direct.ms, input_tokens: direct.tokens, cached_tokens: 0 });
      },
    ];
    for (let i = 0; i < sides.length; i++) await sides[(round + i) % sides.length]!();
    const [s, h, d] = [stdioTurns.at(-1)!, httpTurns.at(-1)!, directTurns.at(-1)!];
    out(`round ${round + 1}: serve-stdio ${fmt(s.ttft_ms)} ms (${s.input_tokens} tokens, ${s.cached_tokens} cached) | serve-http ${fmt(h.ttft_ms)} ms (${h.input_tokens}, ${h.cached_tokens} cached) | direct ${fmt(d.ttft_ms)} ms (${d.input_tokens}) | load ${load()}`);
  }
  const m = (list: SideTurn[]): number => median(list.map((turn) => turn.ttft_ms));
  const stdioRatio = m(directTurns) / m(stdioTurns);
  const httpRatio = m(directTurns) / m(httpTurns);
  const perRound = (list: SideTurn[]): ReturnType<typeof quartiles> => quartiles(list.map((turn, i) => (directTurns[i]?.ttft_ms ?? Number.NaN) / turn.ttft_ms));
  out();
  out(`medians of ${rounds} rounds: time to first token  serve-stdio ${fmt(m(stdioTurns))} ms  serve-http ${fmt(m(httpTurns))} ms  direct ${fmt(m(directTurns))} ms`);
  out(`  prompt tokens/s: serve-stdio ${fmt(median(stdioTurns.map((t) => t.input_tokens)) / (m(stdioTurns) / 1000))}  serve-http ${fmt(median(httpTurns.map((t) => t.input_tokens)) / (m(httpTurns) / 1000))}  direct ${fmt(median(directTurns.map((t) => t.input_tokens)) / (m(directTurns) / 1000))}`);
  out(`  direct / serve-stdio ${stdioRatio.toFixed(3)} (per round q1 ${perRound(stdioTurns).q1.toFixed(3)} median ${perRound(stdioTurns).median.toFixed(3)} q3 ${perRound(stdioTurns).q3.toFixed(3)})`);
  out(`  direct / serve-http  ${httpRatio.toFixed(3)} (per round q1 ${perRound(httpTurns).q1.toFixed(3)} median ${perRound(httpTurns).median.toFixed(3)} q3 ${perRound(httpTurns).q3.toFixed(3)})`);
  out(`target: time to first token ratio >= 0.97: serve-stdio ${stdioRatio >= 0.97 ? "MET" : "NOT MET"}, serve-http ${httpRatio >= 0.97 ? "MET" : "NOT MET"}`);
  ratios.push(ratio("time to first token, ~10 k-token prompt: direct LlamaChat / serve-stdio", stdioRatio, { atLeast: 0.97 }), ratio("time to first token, ~10 k-token prompt: direct LlamaChat / serve-http stream", httpRatio, { atLeast: 0.97 }));
  Object.assign(results, { stdio_ratio: stdioRatio, http_ratio: httpRatio, stdio: stdioTurns, http: httpTurns, direct: directTurns });
}
await http?.stop();

const cancels: CancelSample[] = [];
if (parts.has("cancel") && cli !== null) {
  out();
  for (let round = 0; round < cancelRounds; round++) {
    const sample = await cancelRound(cli, `c${round}`, longPromptText(promptTokens, 200 + round));
    if (sample === null) continue;
    cancels.push(sample);
    out(`cancel ${round + 1}: ${fmt(sample.cancel_ms, 1)} ms to "cancelled" | server CPU ${sample.cpu_s_after.toFixed(2)} s in the 3 s after | read before ${sample.read_before}/${sample.total}, retry cached ${sample.retry_cached} (retry first token ${fmt(sample.retry_ttft_ms)} ms) | load ${load()}`);
  }
  Object.assign(results, { cancels });
}
await cli?.stop();
agent.destroy();

const chunking: Record<number, { chunked_tps: number; one_shot_tps: number; ratio: number; chunk_ms: number; chunk_tokens: number; sizes: number[] }> = {};
if (parts.has("chunk")) {
  out();
  for (const t of chunkThreads) {
    const chunkedRuns: Array<Awaited<ReturnType<typeof chunked>>> = [];
    const oneShotRuns: Array<Awaited<ReturnType<typeof oneShot>>> = [];
    await oneShot(t, "Hello there");
    for (let round = 0; round < chunkRounds; round++) {
      const input = longPromptText(promptTokens, 300 + round);
      const runChunked = async (): Promise<void> => void chunkedRuns.push(await chunked(t, input));
      const runOneShot = async (): Promise<void> => void oneShotRuns.push(await oneShot(t, input));
      for (const run of round % 2 === 0 ? [runChunked, runOneShot] : [runOneShot, runChunked]) await run();
      const c = chunkedRuns.at(-1)!;
      const o = oneShotRuns.at(-1)!;
      out(`threads ${t} round ${round + 1}: chunked ${fmt(c.ms)} ms (${c.tokens} tokens, ${c.chunks.length} chunks: ${c.chunks.map((k) => k.tokens).join(",")}) | one-shot ${fmt(o.ms)} ms (${o.tokens} tokens) | load ${load()}`);
    }
    const tps = (runs: Array<{ ms: number; tokens: number }>): number => median(runs.map((run) => (run.tokens * 1000) / run.ms));
    // Steady state: the chunks after the ramp from the first 128 (the last is a remainder).
    const steady = chunkedRuns.flatMap((run) => run.chunks.slice(3, -1));
    const row = {
      chunked_tps: tps(chunkedRuns),
      one_shot_tps: tps(oneShotRuns),
      ratio: tps(chunkedRuns) / tps(oneShotRuns),
      chunk_ms: median(steady.map((k) => k.ms)),
      chunk_tokens: median(steady.map((k) => k.tokens)),
      sizes: chunkedRuns[0]?.chunks.map((k) => k.tokens) ?? [],
    };
    chunking[t] = row;
    out(`threads ${t}: chunked ${fmt(row.chunked_tps)} prompt tok/s, one-shot ${fmt(row.one_shot_tps)} tok/s, chunked / one-shot ${row.ratio.toFixed(3)} (target >= 0.97: ${row.ratio >= 0.97 ? "MET" : "NOT MET"}); steady chunk ${fmt(row.chunk_tokens)} tokens in ${fmt(row.chunk_ms)} ms`);
    ratios.push(ratio(`threads ${t}: prompt tokens/s, prompt-prefill chunks / one-shot LlamaChat`, row.ratio, { atLeast: 0.97 }));
  }
  Object.assign(results, { chunking });
}

if (cancels.length > 0) {
  const cancelMs = median(cancels.map((c) => c.cancel_ms));
  const chunkMs = chunking[threads]?.chunk_ms ?? Number.NaN;
  out();
  out(`cancel mid-prompt, medians of ${cancels.length}: ${fmt(cancelMs, 1)} ms to "cancelled" (one chunk at threads ${threads}: ${fmt(chunkMs)} ms${Number.isFinite(chunkMs) ? `; target <= one chunk: ${cancelMs <= chunkMs ? "MET" : "NOT MET"}` : "; run the chunk part for the chunk time"})`);
  out(`  server CPU in the 3 s after: ${median(cancels.map((c) => c.cpu_s_after)).toFixed(2)} s; retry cached / read before the cancel: ${median(cancels.map((c) => c.retry_cached / c.read_before)).toFixed(3)} (${cancels.map((c) => `${c.retry_cached}/${c.read_before}`).join(", ")})`);
  ratios.push(ratio("cancel mid-prompt -> cancelled, ms", cancelMs, { atMost: Number.isFinite(chunkMs) ? Math.round(chunkMs) : 500, unit: " ms" }));
  ratios.push(ratio("retry after a cancel mid-prompt: cached tokens / tokens read before", median(cancels.map((c) => c.retry_cached / c.read_before)), { atLeast: 1 }));
}

out(`load average at the end (1/5/15 min): ${load()}`);
for (const { context } of contexts.values()) await context.dispose();
await model.dispose();
await runtime.dispose();
await rm(dir, { recursive: true, force: true });
reportRatios("prefill", ratios);
out(JSON.stringify({ promptTokens, rounds, threads, cancelRounds, chunkThreads, chunkRounds, ...results }));
