import { Agent } from "node:http";
import { performance } from "node:perf_hooks";
import { modelSchema } from "../src/config/schema.js";
import { EmbeddedEngine } from "../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../src/engine/embedded/llama-runtime.js";
import { createLogger } from "../src/logging/create-logger.js";
import { BENCH_SHAPES, ensureFixture, type BenchShapeName } from "../test/fixtures/gguf/index.js";
import { parseSse, startHttpServer } from "../test/helpers/http-server.js";
import { median, ratio, reportRatios } from "./bench-results.js";
import { codexConversation, developerPrompt, type ConversationTurn } from "./codex-conversation.js";
import { directTurn, generateRequest, mainThreadCpuNs, send, turnSample, type TurnSample } from "./http-turns.js";

/**
 * bench:http, the Responses API part — `local-ai serve-http` (the built CLI, embedded engine):
 *
 * 1. one streamed turn through `POST /v1/responses` (the semantic event stream, store: false)
 *    against the same generation on an EmbeddedEngine in this process, same model config, same
 *    messages: tokens/s and time to first token; rounds alternate the order; medians and ratios.
 * 2. a Codex-shaped conversation (bench/codex-conversation.ts: ~17k-character developer prompt,
 *    function tools, store: false, the whole conversation resent each turn, one prompt_cache_key):
 *    time to first token of the last turn / the first, and the share of the previous turn's prompt
 *    served from the KV cache (usage.input_tokens_details.cached_tokens / previous input_tokens).
 *
 * Env: BENCH_ROUNDS (5), BENCH_MAX_TOKENS (64), BENCH_RESPONSES_MODEL=0.5b|small (0.5b),
 * BENCH_CODEX_MODEL=small|0.5b (small: its first turn evaluates ~8k prompt tokens, minutes on the
 * 0.42B shape on 2 busy cores), BENCH_CODEX_TURNS (5), BENCH_CODEX_MAX_TOKENS (32), BENCH_CODEX_PROMPT_CHARS (17000).
 * Both models are the bench shapes with a 16k trained context (the Codex-shaped prompt needs it).
 * See docs/benchmarks.md, "bench:http".
 */

const rounds = Number(process.env.BENCH_ROUNDS ?? "5");
const maxTokens = Number(process.env.BENCH_MAX_TOKENS ?? "64");
const shapeOf = (name: string, value: string): BenchShapeName => {
  if (value !== "small" && value !== "0.5b") throw new Error(`${name} must be small or 0.5b, not ${value}`);
  return value;
};
const modelName = shapeOf("BENCH_RESPONSES_MODEL", process.env.BENCH_RESPONSES_MODEL ?? "0.5b");
const codexModelName = shapeOf("BENCH_CODEX_MODEL", process.env.BENCH_CODEX_MODEL ?? "small");
const codexTurns = Number(process.env.BENCH_CODEX_TURNS ?? "5");
const codexMaxTokens = Number(process.env.BENCH_CODEX_MAX_TOKENS ?? "32");
const codexPromptChars = Number(process.env.BENCH_CODEX_PROMPT_CHARS ?? "17000");
const SYSTEM_PROMPT = "You are a helpful assistant."; // the agents' default system_prompt
const CTX_SIZE = 16_384;

const out = (line = ""): void => void process.stdout.write(`${line}\n`);
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

interface ResponsesEvent {
  type: string;
  response?: { status: string; usage?: { input_tokens: number; output_tokens: number } };
}

/** One streamed Responses turn: request written -> first `response.output_text.delta` -> `response.completed`/`incomplete`. */
async function responsesTurn(port: number, serverPid: number, input: string): Promise<TurnSample> {
  let partial = "";
  let first = 0;
  let last = 0;
  let chunks = 0;
  let end: ResponsesEvent | null = null;
  let done = 0;
  const onData = (piece: string, at: number): void => {
    const blocks = (partial + piece).split("\n\n");
    partial = blocks.pop() ?? "";
    for (const frame of parseSse(blocks.join("\n\n") + "\n\n")) {
      const event = JSON.parse(frame.data) as ResponsesEvent;
      if (event.type === "response.output_text.delta") {
        if (chunks === 0) first = at;
        last = at;
        chunks++;
      } else if (event.type === "response.completed" || event.type === "response.incomplete") {
        end = event;
        done = at;
      }
    }
  };
  const body = { model: "talker", input, stream: true, store: false };
  const cpu = mainThreadCpuNs(serverPid);
  const sent = performance.now();
  const result = await send(agent, port, "POST", "/v1/responses", body, onData);
  const cpuMs = (mainThreadCpuNs(serverPid) - cpu) / 1e6;
  const usage = (end as ResponsesEvent | null)?.response?.usage;
  if (result.status !== 200 || usage === undefined) throw new Error(`stream failed: HTTP ${result.status} ${result.body.slice(-500)}`);
  return turnSample({ cpuMs, sent, first, last, done, outputTokens: usage.output_tokens, inputTokens: usage.input_tokens, chunks });
}

const benchModel = (name: BenchShapeName): Promise<string> => ensureFixture("bench", { shape: { ...BENCH_SHAPES[name], contextLength: CTX_SIZE } });
const modelPath = await benchModel(modelName);
const codexModelPath = await benchModel(codexModelName);
const modelYaml = (key: string, path: string): string[] => [`    ${key}:`, `      path: ${JSON.stringify(path)}`, "      threads: 1", `      ctx_size: ${CTX_SIZE}`];
const server = await startHttpServer({
  readyTimeoutMs: 180_000,
  yaml: [
    "llama:",
    "  models:",
    ...modelYaml("default", modelPath),
    ...(codexModelName === modelName ? [] : modelYaml("codex", codexModelPath)),
    "agents:",
    "  talker:",
    "    temperature: 0",
    `    max_tokens: ${maxTokens}`,
    "  codex:",
    `    model: ${codexModelName === modelName ? "default" : "codex"}`,
    "    temperature: 0",
    `    max_tokens: ${codexMaxTokens}`,
    "",
  ].join("\n"),
});
const port = server.port;
const serverPid = server.proc.pid ?? 0;

const logger = createLogger({ level: "warn", pretty: false });
const runtime = new LlamaRuntime(logger);
const config = modelSchema.parse({ path: modelPath, threads: 1, ctx_size: CTX_SIZE });
const direct = new EmbeddedEngine("default", config, { llama: runtime, logger, parallel: config.parallel });

out(`bench:http (Responses)  serve-http /v1/responses (built CLI, ${server.baseURL}) vs EmbeddedEngine in process`);
out(`stream: bench "${modelName}" shape (16k trained context) ${modelPath}, threads 1, ctx ${CTX_SIZE}, parallel ${config.parallel}, temperature 0, max_tokens ${maxTokens}, ${rounds} rounds`);
out(`Codex-shaped: bench "${codexModelName}" shape ${codexModelPath}, ${codexTurns} turns, ${codexPromptChars}-character developer prompt, max_tokens ${codexMaxTokens}`);
out();

// Warm-up (not measured).
await responsesTurn(port, serverPid, "Hello there");
await directTurn(direct, generateRequest(SYSTEM_PROMPT, "Hello there", maxTokens));

const httpTurns: TurnSample[] = [];
const directTurns: TurnSample[] = [];
for (let round = 0; round < rounds; round++) {
  const input = `Tell me a long story, part ${round + 1}`;
  const runHttp = async (): Promise<void> => void httpTurns.push(await responsesTurn(port, serverPid, input));
  const runDirect = async (): Promise<void> => void directTurns.push(await directTurn(direct, generateRequest(SYSTEM_PROMPT, input, maxTokens)));
  for (const step of round % 2 === 0 ? [runHttp, runDirect] : [runDirect, runHttp]) await step();
  const h = httpTurns.at(-1)!;
  const d = directTurns.at(-1)!;
  out(
    `round ${round + 1}: /v1/responses ${h.stream_tps.toFixed(1)} tok/s stream, ${h.e2e_tps.toFixed(1)} e2e, first token ${h.ttft_ms.toFixed(1)} ms, ${h.chunks} deltas/${h.output_tokens} tokens, ${h.input_tokens} in | direct ${d.stream_tps.toFixed(1)} tok/s stream, ${d.e2e_tps.toFixed(1)} e2e, first token ${d.ttft_ms.toFixed(1)} ms, ${d.output_tokens} tokens, ${d.input_tokens} in`,
  );
}
await direct.close();
await runtime.dispose();

out();
out(`Codex-shaped conversation (prompt_cache_key stable, store: false):`);
const conversation: ConversationTurn[] = await codexConversation(agent, port, { model: "codex", turns: codexTurns, cacheKey: "bench-codex-session", prompt: developerPrompt(codexPromptChars) });
conversation.forEach((turn, i) => {
  const previous = conversation[i - 1];
  const share = previous === undefined ? "" : `, ${((turn.cached_tokens / previous.input_tokens) * 100).toFixed(1)}% of the previous prompt cached`;
  out(`turn ${i + 1}: first token ${turn.ttft_ms.toFixed(0)} ms, total ${turn.total_ms.toFixed(0)} ms, input ${turn.input_tokens} tokens, cached ${turn.cached_tokens}, output ${turn.output_tokens} (${turn.status})${share}`);
});

agent.destroy();
await server.stop();

const m = (list: TurnSample[], key: keyof TurnSample): number => median(list.map((s) => s[key]));
const streamRatio = m(httpTurns, "stream_tps") / m(directTurns, "stream_tps");
const e2eRatio = m(httpTurns, "e2e_tps") / m(directTurns, "e2e_tps");
const ttftDiff = m(httpTurns, "ttft_ms") - m(directTurns, "ttft_ms");
const firstTurn = conversation[0]!;
const lastTurn = conversation.at(-1)!;
const ttftGrowth = lastTurn.ttft_ms / firstTurn.ttft_ms;
const shares = conversation.slice(1).map((turn, i) => turn.cached_tokens / conversation[i]!.input_tokens);
const minShare = Math.min(...shares);

out();
out(`medians of ${rounds} rounds                 /v1/responses      direct   ratio / difference`);
out(`  stream tok/s (first->last delta)   ${m(httpTurns, "stream_tps").toFixed(1).padStart(14)} ${m(directTurns, "stream_tps").toFixed(1).padStart(11)}   ${streamRatio.toFixed(3)} (overhead ${((1 - streamRatio) * 100).toFixed(1)}%)`);
out(`  end-to-end tok/s (-> completed)    ${m(httpTurns, "e2e_tps").toFixed(1).padStart(14)} ${m(directTurns, "e2e_tps").toFixed(1).padStart(11)}   ${e2eRatio.toFixed(3)} (overhead ${((1 - e2eRatio) * 100).toFixed(1)}%)`);
out(`  time to first token ms             ${m(httpTurns, "ttft_ms").toFixed(1).padStart(14)} ${m(directTurns, "ttft_ms").toFixed(1).padStart(11)}   +${ttftDiff.toFixed(1)} ms`);
out(`  server main-thread CPU ms/token    ${m(httpTurns, "engine_js_cpu_per_token_ms").toFixed(3).padStart(14)} ${m(directTurns, "engine_js_cpu_per_token_ms").toFixed(3).padStart(11)}`);
out(`  output / input tokens              ${`${m(httpTurns, "output_tokens")} / ${m(httpTurns, "input_tokens")}`.padStart(14)} ${`${m(directTurns, "output_tokens")} / ${m(directTurns, "input_tokens")}`.padStart(11)}`);
out(`Codex-shaped: first token turn ${codexTurns} / turn 1 = ${ttftGrowth.toFixed(3)} (${lastTurn.ttft_ms.toFixed(0)} / ${firstTurn.ttft_ms.toFixed(0)} ms); cached share of the previous prompt: min ${(minShare * 100).toFixed(1)}% (${shares.map((s) => (s * 100).toFixed(1)).join(", ")}%)`);
reportRatios("responses", [
  ratio("stream tokens/s, /v1/responses / engine direct", streamRatio, { atLeast: 0.95 }),
  ratio("end-to-end tokens/s, /v1/responses / engine direct", e2eRatio),
  ratio(`Codex-shaped: first token, turn ${codexTurns} / turn 1`, ttftGrowth, { atMost: 1.5 }),
  ratio("Codex-shaped: previous prompt served from cache (min over turns)", minShare, { atLeast: 0.9, unit: "" }),
]);
out(JSON.stringify({ model: modelName, codex_model: codexModelName, rounds, maxTokens, stream_ratio: streamRatio, e2e_ratio: e2eRatio, ttft_added_ms: ttftDiff, codex: conversation, http: httpTurns, direct: directTurns }));
