import { BENCH_SHAPES, ensureFixture, type BenchShapeName } from "../test/fixtures/gguf/index.js";
import { freePort } from "../test/helpers/free-port.js";
import { startHttpServer } from "../test/helpers/http-server.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../test/helpers/llama-server-binary.js";
import { ratio, reportRatios } from "./bench-results.js";
import { claudeCodeConversation, type ConversationStep } from "./claude-code-conversation.js";

/**
 * bench:http, the Messages API part — `local-ai serve-http` (the built CLI): a Claude Code-shaped
 * conversation (bench/claude-code-conversation.ts: ~20k characters of system text and tool
 * schemas, 5 steps, each adding a Bash tool_use and its tool_result, one
 * x-claude-code-session-id) on the embedded engine and on llama-server (skipped loudly when the
 * binary is not built): time to first token of the last step / the first, and the share of the
 * previous step's prompt read from the KV cache (cache_read_input_tokens / previous prompt).
 *
 * On llama-server the tool schemas go in as system text instead of `tools`: the bench model's
 * random text is not in the chat template's tool-call format, and llama-server then answers
 * without usage (the engine keeps the text: docs/engines.md), which would leave nothing to measure.
 *
 * Env: BENCH_CC_MODEL=small|0.5b (small), BENCH_CC_STEPS (5), BENCH_CC_CHARS (20000),
 * BENCH_CC_MAX_TOKENS (32), BENCH_CC_ENGINES=embedded,llama-server (both). See docs/benchmarks.md, "bench:http".
 */

const shape = (process.env.BENCH_CC_MODEL ?? "small") as BenchShapeName;
if (!(shape in BENCH_SHAPES)) throw new Error(`BENCH_CC_MODEL must be one of ${Object.keys(BENCH_SHAPES).join(", ")}`);
const steps = Number(process.env.BENCH_CC_STEPS ?? "5");
const chars = Number(process.env.BENCH_CC_CHARS ?? "20000");
const maxTokens = Number(process.env.BENCH_CC_MAX_TOKENS ?? "32");
const CTX_SIZE = 16_384;

const out = (line = ""): void => void process.stdout.write(`${line}\n`);
const modelPath = await ensureFixture("bench", { shape: { ...BENCH_SHAPES[shape], contextLength: CTX_SIZE } });
const binary = findLlamaServerBinary();
if (binary === null) process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
const llamaPort = await freePort();
const model = (key: string, extra: string[] = []): string[] => [`    ${key}:`, `      path: ${JSON.stringify(modelPath)}`, "      threads: 1", `      ctx_size: ${CTX_SIZE}`, ...extra];
const agent = (name: string, modelKey: string): string[] => [`  ${name}:`, `    model: ${modelKey}`, "    temperature: 0", `    max_tokens: ${maxTokens}`];
const server = await startHttpServer({
  readyTimeoutMs: 180_000,
  yaml: [
    "llama:",
    ...(binary === null ? [] : [`  binary: ${JSON.stringify(binary)}`]),
    "  models:",
    ...model("default"),
    ...(binary === null ? [] : model("served", ["      engine: llama-server", `      port: ${llamaPort}`, "      parallel: 1"])),
    "agents:",
    ...agent("embedded", "default"),
    ...(binary === null ? [] : agent("llama-server", "served")),
    "",
  ].join("\n"),
});

out(`bench:http (Messages)  serve-http /v1/messages?beta=true (built CLI, ${server.baseURL})`);
out(`Claude Code-shaped: bench "${shape}" shape ${modelPath}, ctx ${CTX_SIZE}, ${steps} steps, ~${chars} characters of system text and tool schemas, max_tokens ${maxTokens}`);

const results: Record<string, ConversationStep[]> = {};
const ratios = [];
const engines = (process.env.BENCH_CC_ENGINES ?? "embedded,llama-server").split(",").filter((name) => name === "embedded" || (name === "llama-server" && binary !== null));
for (const engine of engines) {
  out();
  out(`${engine}:`);
  const conversation = await claudeCodeConversation(server.baseURL, { model: engine, steps, sessionId: `bench-${engine}`, chars, maxTokens, toolsInSystem: engine === "llama-server" });
  if (conversation.some((step) => step.prompt_tokens === 0)) out(`${engine}: a step came back without usage (the engine could not count it)`);
  results[engine] = conversation;
  conversation.forEach((step, i) => {
    const previous = conversation[i - 1];
    const share = previous === undefined ? "" : `, ${((step.cache_read_tokens / previous.prompt_tokens) * 100).toFixed(1)}% of the previous prompt read from cache`;
    out(`step ${i + 1}: first token ${step.ttft_ms.toFixed(0)} ms, total ${step.total_ms.toFixed(0)} ms, prompt ${step.prompt_tokens} tokens, cache read ${step.cache_read_tokens}, output ${step.output_tokens}${share}`);
  });
  const growth = conversation.at(-1)!.ttft_ms / conversation[0]!.ttft_ms;
  const minShare = Math.min(...conversation.slice(1).map((step, i) => step.cache_read_tokens / conversation[i]!.prompt_tokens));
  out(`${engine}: first token step ${steps} / step 1 = ${growth.toFixed(3)}; previous prompt read from cache: min ${(minShare * 100).toFixed(1)}%`);
  ratios.push(ratio(`Claude Code-shaped (${engine}): first token, step ${steps} / step 1`, growth, { atMost: 1.5 }), ratio(`Claude Code-shaped (${engine}): previous prompt read from cache (min over steps)`, minShare, { atLeast: 0.9, unit: "" }));
}

await server.stop();
out();
reportRatios("messages", ratios);
out(JSON.stringify({ model: shape, steps, chars, maxTokens, results }));
