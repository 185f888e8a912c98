// The real Codex CLI (pinned in scripts/codex.version) with a stream idle timeout of 8 s against
// serve-http on a model that reads Codex's first request (its instructions and tool schemas, about
// 17.6 k tokens here) in well over 8 s: the `response.in_progress` heartbeats (http.keepalive_s)
// keep Codex waiting, and `codex exec` ends with the model's answer. Codex's idle timer counts
// events, not SSE comments: with comments only, or a keep-alive longer than its timeout, it gives
// up ("idle timeout waiting for SSE"), retries, and fails. Inside a loopback-only namespace, like
// codex-cli.test.ts. Slow on one thread (about 5 min on a busy 2-core machine): `npm run test:stress` runs it, or
// LOCAL_AI_CODEX_LONG_PROMPT=1.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { pinnedCodexVersion } from "../helpers/codex-binary.js";
import { codexLongPromptGate } from "../helpers/codex-long-prompt-gate.js";
import { runCodexScenario } from "../helpers/codex-scenario.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { parseSse } from "../helpers/http-server.js";
import { LONG_PROMPT_SHAPE } from "../helpers/long-prompt.js";

const { codexBinary, skip } = codexLongPromptGate();

const AGENT = "coder";
const TOKEN = "codex-test-token";
/** Codex's provider settings: give up on a stream after 8 s without an event, one retry. */
const IDLE_TIMEOUT_MS = 8000;
/** http.keepalive_s: its default. */
const KEEPALIVE_S = 5;

interface ResponseEvent {
  type: string;
  sequence_number: number;
  delta?: string;
  response?: { status: string; usage?: { input_tokens: number } };
}

describe(`Codex CLI ${pinnedCodexVersion() ?? "?"} with an 8 s stream idle timeout, a first request read in well over 8 s`, { skip }, () => {
  it("response.in_progress every keepalive_s keeps Codex waiting: one request, no retry, exit 0 with the model's text", async () => {
    // One-token answers: Codex fails a response cut at max tokens (response.incomplete), and the bench model never stops by itself.
    const model = await ensureFixture("bench", { shape: LONG_PROMPT_SHAPE, oneTokenAnswers: true });
    const started = performance.now();
    const report = await runCodexScenario(
      {
        codexBinary: codexBinary ?? "",
        serverYaml: configYaml({
          llama: { models: { default: localModel(model, { ctx_size: 32768, threads: 1, parallel: 1 }) } },
          agents: { [AGENT]: { temperature: 0, max_tokens: 8 } },
          http: { keepalive_s: KEEPALIVE_S },
        }),
        bearerToken: TOKEN,
        model: AGENT,
        prompt: "say hello",
        providerSettings: { stream_idle_timeout_ms: IDLE_TIMEOUT_MS, stream_max_retries: 1 },
        codexTimeoutMs: 840_000,
      },
      900_000,
    );
    const seconds = (performance.now() - started) / 1000;
    assert.deepEqual(report.interfaces, ["lo"], "Codex ran in a namespace with loopback only");
    assert.equal(report.codex.code, 0, `codex exec failed:\n${report.codex.stderr.slice(-4000)}\nserver:\n${report.serverStderr.slice(-2000)}`);
    assert.equal(report.exchanges.length, 1, `one request, no retry after an idle timeout: ${report.codex.stderr.slice(-2000)}`);
    const exchange = report.exchanges[0]!;
    assert.equal(exchange.status, 200);
    const events = parseSse(exchange.responseBody).map((frame) => JSON.parse(frame.data) as ResponseEvent);
    // The prompt's reading: the events from response.created to the first output item.
    const firstOutput = events.findIndex((event) => event.type === "response.output_item.added");
    const heartbeats = events.slice(2, firstOutput);
    assert.ok(heartbeats.length > 0 && heartbeats.every((event) => event.type === "response.in_progress"), `while the prompt was read: ${heartbeats.map((event) => event.type).join(", ")}`);
    // At least this many keep-alive intervals passed before the first output: the reading took longer than the idle timeout.
    assert.ok(heartbeats.length * KEEPALIVE_S * 1000 > IDLE_TIMEOUT_MS, `${heartbeats.length} heartbeats: the prompt was read in under ${IDLE_TIMEOUT_MS} ms, the test proves nothing`);
    const last = events.at(-1);
    assert.equal(last?.type, "response.completed");
    const streamed = events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta).join("");
    assert.ok(streamed.trim() !== "", "the model answered");
    assert.equal(report.codex.lastMessage, streamed, "Codex's final message is the streamed text");
    assert.equal(report.codex.stdout, `${streamed}\n`, "and exactly that is what codex exec prints");
    process.stderr.write(`# codex long prompt: ${last.response?.usage?.input_tokens} prompt tokens, ${heartbeats.length} heartbeats before the first output, the scenario took ${seconds.toFixed(0)} s\n`);
  });
});
