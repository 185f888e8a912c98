import { Agent } from "node:http";
import { performance } from "node:perf_hooks";
import { modelSchema } from "../src/config/schema.js";
import { EmbeddedEngine } from "../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../src/engine/embedded/llama-runtime.js";
import { createLogger } from "../src/logging/create-logger.js";
import { DEMO_SENTENCE, ensureFixture } from "../test/fixtures/gguf/index.js";
import { parseSse, startHttpServer, type ChunkLike } from "../test/helpers/http-server.js";
import { quartiles, ratio, reportRatios } from "./bench-results.js";
import { directTurn as directEngineTurn, generateRequest as engineRequest, mainThreadCpuNs, send as sendWith, turnSample, type HttpResult, type TurnSample } from "./http-turns.js";

/**
 * bench:http — `local-ai serve-http` (the built CLI as a child process, embedded engine) against
 * the same generation on an EmbeddedEngine in this process, same model, same run:
 *
 * 1. one streamed turn (SSE, standard chat.completion.chunk frames, usage chunk) on the tiny model
 *    (never stops by itself, max_tokens 256, threads 1) vs `EmbeddedEngine.generate`: tokens/s and
 *    time to first token; rounds alternate the order; medians and ratios.
 * 2. throughput with N concurrent clients for S seconds: `GET /health` requests/s, and short
 *    non-stream completions/s (demo model, the exact demo sentence, checked) against the same
 *    number of concurrent `generate()` callers on an in-process demo-model engine.
 *
 * `--stream-only` (or BENCH_HTTP_STREAM_ONLY=1; `npm run bench:http:sse`): part 1 alone, 25 rounds by
 * default (a minute or two instead of the whole bench).
 *
 * Env: BENCH_ROUNDS (9; 25 with --stream-only), BENCH_MAX_TOKENS (256), BENCH_CONCURRENCY (10), BENCH_SECONDS (5),
 * BENCH_RPS_ROUNDS (3), BENCH_HTTP_MODEL=tiny|small (the stream model; small: the 84M bench model,
 * to see the same fixed per-token cost against a realistic decode time), BENCH_HTTP_PROFILE=<dir>:
 * run the server with --cpu-prof into that folder. BENCH_COALESCE_MS=<ms>: http.coalesce_ms for the server
 * (unset: the default; 0: one SSE chunk per engine chunk). See docs/benchmarks.md, "bench:http".
 */

const streamOnly = process.argv.includes("--stream-only") || process.env.BENCH_HTTP_STREAM_ONLY === "1";
const rounds = Number(process.env.BENCH_ROUNDS ?? (streamOnly ? "25" : "9"));
const maxTokens = Number(process.env.BENCH_MAX_TOKENS ?? "256");
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? "10");
const seconds = Number(process.env.BENCH_SECONDS ?? "5");
const rpsRounds = Number(process.env.BENCH_RPS_ROUNDS ?? "3");
const modelName = process.env.BENCH_HTTP_MODEL ?? "tiny";
if (modelName !== "tiny" && modelName !== "small" && modelName !== "0.5b") throw new Error(`BENCH_HTTP_MODEL must be tiny, small or 0.5b, not ${modelName}`);
const SYSTEM_PROMPT = "You are a helpful assistant.";

const out = (line = ""): void => void process.stdout.write(`${line}\n`);

function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

// ------------------------------------------------------------------------------------ HTTP side

const agent = new Agent({ keepAlive: true, maxSockets: Math.max(concurrency, 4) });

/** One request over the bench's keep-alive agent. */
function send(port: number, method: string, path: string, body: unknown, onData?: (text: string, at: number) => void): Promise<HttpResult> {
  return sendWith(agent, port, method, path, body, onData);
}

async function sseTurn(port: number, serverPid: number, user: string, input: string): Promise<TurnSample> {
  let partial = "";
  let first = 0;
  let last = 0;
  let chunks = 0;
  let usage: ChunkLike["usage"] = null;
  let done = 0;
  const onData = (piece: string, at: number): void => {
    const blocks = (partial + piece).split("\n\n");
    partial = blocks.pop() ?? "";
    for (const frame of parseSse(blocks.join("\n\n") + "\n\n")) {
      if (frame.data === "[DONE]") {
        done = at;
        continue;
      }
      if (frame.event !== null) throw new Error(`named event in the default stream: ${frame.event}`);
      const chunk = JSON.parse(frame.data) as ChunkLike;
      if (chunk.usage) usage = chunk.usage;
      if (chunk.choices?.[0]?.delta?.content) {
        if (chunks === 0) first = at;
        last = at;
        chunks++;
      }
    }
  };
  const body = { model: "talker", messages: [{ role: "user", content: input }], stream: true, stream_options: { include_usage: true }, user, session_id: "bench" };
  const cpu = mainThreadCpuNs(serverPid);
  const sent = performance.now();
  const result = await send(port, "POST", "/v1/chat/completions", body, onData);
  const cpuMs = (mainThreadCpuNs(serverPid) - cpu) / 1e6;
  if (result.status !== 200 || done === 0) throw new Error(`stream failed: HTTP ${result.status} ${result.body.slice(0, 500)}`);
  const outputTokens = Number((usage as ChunkLike["usage"])?.completion_tokens);
  return turnSample({ cpuMs, sent, first, last, done, outputTokens, inputTokens: Number((usage as ChunkLike["usage"])?.prompt_tokens), chunks });
}

/** `workers` loops calling `once(worker, i)` until `ms` have passed; returns completions per second. */
async function closedLoop(workers: number, ms: number, once: (worker: number, i: number) => Promise<void>): Promise<{ perSecond: number; count: number }> {
  const end = performance.now() + ms;
  let count = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let i = 0; performance.now() < end; i++) {
        await once(worker, i);
        count++;
      }
    }),
  );
  return { perSecond: (count * 1000) / (performance.now() - started), count };
}

// ---------------------------------------------------------------------------------- direct side

function generateRequest(input: string, tokens: number): ReturnType<typeof engineRequest> {
  return engineRequest(SYSTEM_PROMPT, input, tokens);
}

function directTurn(engine: EmbeddedEngine, input: string): Promise<TurnSample> {
  return directEngineTurn(engine, generateRequest(input, maxTokens));
}

async function directText(engine: EmbeddedEngine, input: string): Promise<string> {
  let text = "";
  for await (const chunk of engine.generate(generateRequest(input, 1024))) if (chunk.type === "text") text += chunk.delta;
  return text;
}

// ------------------------------------------------------------------------------------------ main

const [demoPath, tinyPath] = await Promise.all([ensureFixture("demo"), modelName === "tiny" ? ensureFixture("tiny", { seed: 3 }) : ensureFixture("bench", { shape: modelName })]);
const profileDir = process.env.BENCH_HTTP_PROFILE;
const coalesceMs = process.env.BENCH_COALESCE_MS;
const server = await startHttpServer({
  ...(profileDir ? { nodeArgs: ["--cpu-prof", "--cpu-prof-dir", profileDir] } : {}),
  yaml: [
    ...(coalesceMs === undefined ? [] : ["http:", `  coalesce_ms: ${coalesceMs}`]),
    "llama:",
    "  models:",
    "    default:",
    `      path: ${JSON.stringify(demoPath)}`,
    "      threads: 1",
    "      ctx_size: 2048",
    "    tiny:",
    `      path: ${JSON.stringify(tinyPath)}`,
    "      threads: 1",
    "      ctx_size: 4096",
    "agents:",
    "  assistant:",
    "    temperature: 0",
    "  talker:",
    "    model: tiny",
    "    temperature: 0",
    `    max_tokens: ${maxTokens}`,
    "",
  ].join("\n"),
});
const port = server.port;

// The same model configs as the CLI parses (defaults included: parallel 2, gpu auto).
const logger = createLogger({ level: "warn", pretty: false });
const runtime = new LlamaRuntime(logger);
const tinyConfig = modelSchema.parse({ path: tinyPath, threads: 1, ctx_size: 4096 });
const demoConfig = modelSchema.parse({ path: demoPath, threads: 1, ctx_size: 2048 });
const tiny = new EmbeddedEngine("tiny", tinyConfig, { llama: runtime, logger, parallel: tinyConfig.parallel });
const demo = new EmbeddedEngine("default", demoConfig, { llama: runtime, logger, parallel: demoConfig.parallel });

out(`bench:http  serve-http (built CLI, ${server.baseURL}) vs EmbeddedEngine in process`);
out(`stream: ${modelName === "small" ? 'bench "small" model (84M params, q8_0)' : "tiny model (seed 3)"} ${tinyPath}, threads 1, ctx 4096, parallel ${tinyConfig.parallel}, temperature 0, max_tokens ${maxTokens}; ${rounds} rounds`);
if (!streamOnly) out(`throughput: ${concurrency} concurrent clients x ${seconds} s, ${rpsRounds} rounds; completions on the demo model ${demoPath}`);
out();

// Warm-up (not measured): first turn on each side and each model.
const serverPid = server.proc.pid ?? 0;
await sseTurn(port, serverPid, "bench_warm", "Hello there");
await directTurn(tiny, "Hello there");
const warmText = streamOnly ? DEMO_SENTENCE : await directText(demo, "Hello");
if (warmText !== DEMO_SENTENCE) throw new Error(`the in-process demo engine answered ${JSON.stringify(warmText)}`);

const httpTurns: TurnSample[] = [];
const directTurns: TurnSample[] = [];
for (let round = 0; round < rounds; round++) {
  const input = `Tell me a long story, part ${round + 1}`;
  const runHttp = async (): Promise<void> => void httpTurns.push(await sseTurn(port, serverPid, `bench_u${round}`, input));
  const runDirect = async (): Promise<void> => void directTurns.push(await directTurn(tiny, input));
  if (round % 2 === 0) {
    await runHttp();
    await runDirect();
  } else {
    await runDirect();
    await runHttp();
  }
  const h = httpTurns.at(-1)!;
  const d = directTurns.at(-1)!;
  out(
    `round ${round + 1}: SSE ${h.stream_tps.toFixed(0)} tok/s stream, ${h.e2e_tps.toFixed(0)} tok/s e2e, first token ${h.ttft_ms.toFixed(2)} ms, ${h.chunks} chunks/${h.output_tokens} tokens | direct ${d.stream_tps.toFixed(0)} tok/s stream, ${d.e2e_tps.toFixed(0)} tok/s e2e, first token ${d.ttft_ms.toFixed(2)} ms, ${d.chunks} chunks/${d.output_tokens} tokens`,
  );
}

const healthRps: number[] = [];
const httpCps: number[] = [];
const directCps: number[] = [];
let wrong = 0;
let rpsSession = 0;
for (let round = 0; round < (streamOnly ? 0 : rpsRounds); round++) {
  const health = async (): Promise<void> => {
    const r = await closedLoop(concurrency, seconds * 1000, async () => {
      const res = await send(port, "GET", "/health", undefined);
      if (res.status !== 200) throw new Error(`/health ${res.status}`);
    });
    healthRps.push(r.perSecond);
  };
  const completions = async (): Promise<void> => {
    const r = await closedLoop(concurrency, seconds * 1000, async () => {
      const n = rpsSession++;
      const res = await send(port, "POST", "/v1/chat/completions", { model: "assistant", messages: [{ role: "user", content: "Hello" }], user: `rps_u${n}`, session_id: `rps${n}` });
      if (res.status !== 200) throw new Error(`completion ${res.status}: ${res.body.slice(0, 300)}`);
      if ((JSON.parse(res.body) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content !== DEMO_SENTENCE) wrong++;
    });
    httpCps.push(r.perSecond);
  };
  const direct = async (): Promise<void> => {
    const r = await closedLoop(concurrency, seconds * 1000, async () => {
      if ((await directText(demo, "Hello")) !== DEMO_SENTENCE) wrong++;
    });
    directCps.push(r.perSecond);
  };
  const order = round % 2 === 0 ? [health, completions, direct] : [direct, completions, health];
  for (const step of order) await step();
  out(`throughput ${round + 1}: /health ${healthRps.at(-1)!.toFixed(0)} req/s | completions ${httpCps.at(-1)!.toFixed(1)} req/s | direct generations ${directCps.at(-1)!.toFixed(1)} /s`);
}

agent.destroy();
await server.stop();
await tiny.close();
await demo.close();
await runtime.dispose();

const m = (list: TurnSample[], key: keyof TurnSample): number => median(list.map((s) => s[key]));
const streamRatio = m(httpTurns, "stream_tps") / m(directTurns, "stream_tps");
const e2eRatio = m(httpTurns, "e2e_tps") / m(directTurns, "e2e_tps");
const ttftDiff = m(httpTurns, "ttft_ms") - m(directTurns, "ttft_ms");
const cpsRatio = median(httpCps) / median(directCps);
// Each round pairs the two sides back to back: the spread of these per-round ratios is the noise.
const roundRatios = quartiles(httpTurns.map((h, i) => h.stream_tps / (directTurns[i]?.stream_tps ?? Number.NaN)));

out();
out(`medians of ${rounds} rounds                 serve-http SSE      direct   ratio / difference`);
out(`  stream tok/s (first->last chunk)   ${m(httpTurns, "stream_tps").toFixed(0).padStart(14)} ${m(directTurns, "stream_tps").toFixed(0).padStart(11)}   ${streamRatio.toFixed(3)} (overhead ${((1 - streamRatio) * 100).toFixed(1)}%)`);
out(`  per-round stream ratio quartiles    q1 ${roundRatios.q1.toFixed(3)}  median ${roundRatios.median.toFixed(3)}  q3 ${roundRatios.q3.toFixed(3)}`);
out(`  end-to-end tok/s (request->[DONE]) ${m(httpTurns, "e2e_tps").toFixed(0).padStart(14)} ${m(directTurns, "e2e_tps").toFixed(0).padStart(11)}   ${e2eRatio.toFixed(3)} (overhead ${((1 - e2eRatio) * 100).toFixed(1)}%)`);
out(`  time to first token ms             ${m(httpTurns, "ttft_ms").toFixed(2).padStart(14)} ${m(directTurns, "ttft_ms").toFixed(2).padStart(11)}   +${ttftDiff.toFixed(2)} ms`);
out(`  wall ms per token (stream)         ${(1000 / m(httpTurns, "stream_tps")).toFixed(3).padStart(14)} ${(1000 / m(directTurns, "stream_tps")).toFixed(3).padStart(11)}   +${(1000 / m(httpTurns, "stream_tps") - 1000 / m(directTurns, "stream_tps")).toFixed(3)} ms`);
out(`  engine main-thread CPU ms/token    ${m(httpTurns, "engine_js_cpu_per_token_ms").toFixed(3).padStart(14)} ${m(directTurns, "engine_js_cpu_per_token_ms").toFixed(3).padStart(11)}   +${(m(httpTurns, "engine_js_cpu_per_token_ms") - m(directTurns, "engine_js_cpu_per_token_ms")).toFixed(3)} ms (serve-http: the server's main thread; direct: this process's)`);
out(`  content chunks per turn            ${m(httpTurns, "chunks").toFixed(0).padStart(14)} ${m(directTurns, "chunks").toFixed(0).padStart(11)}`);
out(`  output tokens (usage)              ${m(httpTurns, "output_tokens").toFixed(0).padStart(14)} ${m(directTurns, "output_tokens").toFixed(0).padStart(11)}`);
out(`  input tokens (usage)               ${m(httpTurns, "input_tokens").toFixed(0).padStart(14)} ${m(directTurns, "input_tokens").toFixed(0).padStart(11)}`);
if (!streamOnly) {
  out(`medians of ${rpsRounds} throughput rounds (${concurrency} concurrent clients, ${seconds} s each)`);
  out(`  GET /health req/s                  ${median(healthRps).toFixed(0).padStart(14)}`);
  out(`  demo completions/s (non-stream)    ${median(httpCps).toFixed(1).padStart(14)} ${median(directCps).toFixed(1).padStart(11)}   ${cpsRatio.toFixed(3)}`);
  out(`  answers other than the demo sentence: ${wrong}`);
}
out();
out(`target: SSE tokens/s overhead < 5%: ${1 - streamRatio < 0.05 ? "MET" : "NOT MET"} (stream ${((1 - streamRatio) * 100).toFixed(1)}%, end-to-end ${((1 - e2eRatio) * 100).toFixed(1)}%)`);
out(`target: per-round SSE stream ratio median >= 0.95: ${roundRatios.median >= 0.95 ? "MET" : "NOT MET"} (${roundRatios.median.toFixed(3)}; one run of 25 rounds moves by about +-0.03, docs/benchmarks.md)`);
reportRatios("http", [
  ratio("stream tokens/s, serve-http SSE / engine direct", streamRatio, { atLeast: 0.95 }),
  ratio("end-to-end tokens/s, serve-http SSE / engine direct", e2eRatio),
  ...(streamOnly ? [] : [ratio("demo completions/s, serve-http / engine direct", cpsRatio)]),
]);
out(JSON.stringify({ rounds, maxTokens, concurrency, seconds, stream_ratio: streamRatio, round_ratios: roundRatios, e2e_ratio: e2eRatio, ttft_added_ms: ttftDiff, health_rps: healthRps, http_cps: httpCps, direct_cps: directCps, completions_ratio: cpsRatio, wrong, http: httpTurns, direct: directTurns }));
