// The run of codex-long-prompt.test.ts (the real Codex CLI, 8 s stream idle timeout, one retry,
// against serve-http on a model that reads Codex's ~17.6 k-token first request in minutes) with
// the stream cut: a proxy between Codex and serve-http destroys both sockets of the first
// /v1/responses exchange 10 s after it began, mid-prompt. Codex retries the same request, and the
// retry finds what had been read before the cut in the conversation's sequence: its
// `cached_tokens` is at least the last "reading the prompt" count logged before the cut (a lower
// bound: the chunk under way at the cut is kept too). Inside a loopback-only namespace, like
// codex-cli.test.ts. Slow (minutes on one thread): `npm run test:stress` runs it, or
// LOCAL_AI_CODEX_LONG_PROMPT=1.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { pinnedCodexVersion } from "../helpers/codex-binary.js";
import { codexLongPromptGate } from "../helpers/codex-long-prompt-gate.js";
import { runCodexStreamCutScenario } from "../helpers/codex-stream-cut-scenario.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { parseSse } from "../helpers/http-server.js";
import { LONG_PROMPT_SHAPE } from "../helpers/long-prompt.js";

const { codexBinary, skip } = codexLongPromptGate();

const AGENT = "coder";
const TOKEN = "codex-test-token";
/** The first stream is cut this long after Codex sent it: well before the prompt is read. */
const CUT_AFTER_MS = 10_000;

interface ResponseEvent {
  type: string;
  delta?: string;
  response?: { status: string; usage?: { input_tokens: number; input_tokens_details?: { cached_tokens: number } } };
}

describe(`Codex CLI ${pinnedCodexVersion() ?? "?"}: its first long request's stream cut after ${CUT_AFTER_MS / 1000} s, mid-prompt`, { skip }, () => {
  it("Codex retries, the retry reuses what had been read before the cut (cached_tokens), exit 0 with the model's text", async () => {
    // As codex-long-prompt.test.ts: one-token answers (Codex fails a response cut at max tokens).
    const model = await ensureFixture("bench", { shape: LONG_PROMPT_SHAPE, oneTokenAnswers: true });
    const started = performance.now();
    const report = await runCodexStreamCutScenario(
      {
        codexBinary: codexBinary ?? "",
        serverYaml: configYaml({
          llama: { models: { default: localModel(model, { ctx_size: 32768, threads: 1, parallel: 1 }) } },
          agents: { [AGENT]: { temperature: 0, max_tokens: 8 } },
          http: { keepalive_s: 5 },
        }),
        bearerToken: TOKEN,
        model: AGENT,
        prompt: "say hello",
        providerSettings: { stream_idle_timeout_ms: 8000, stream_max_retries: 1 },
        cut: { path: "/v1/responses", afterMs: CUT_AFTER_MS },
        codexTimeoutMs: 840_000,
      },
      900_000,
    );
    const seconds = (performance.now() - started) / 1000;
    const failure = `codex:\n${report.codex.stderr.slice(-3000)}\nserver:\n${report.serverStderr.slice(-2000)}`;
    assert.deepEqual(report.interfaces, ["lo"], "Codex ran in a namespace with loopback only");
    const cut = report.cut;
    assert.ok(cut !== null && cut.responseStarted && cut.requestId !== null, `the first stream was cut once its response had started: ${JSON.stringify(cut)}\n${failure}`);

    // Before the cut: the first request's prompt was being read, not yet done.
    const firstReads = report.promptReads.filter((read) => read.requestId === cut.requestId);
    const beforeCut = firstReads.filter((read) => read.atMs < cut.atMs);
    assert.ok(beforeCut.length > 0, `no "reading the prompt" line of ${cut.requestId} before the cut\n${failure}`);
    const total = beforeCut[0]!.total;
    const readBefore = Math.max(...beforeCut.map((read) => read.processed));
    assert.ok(readBefore > beforeCut[0]!.cached && readBefore < total, `the cut landed mid-prompt: ${readBefore} of ${total} read (${beforeCut[0]!.cached} cached at the start)`);

    assert.equal(report.codex.code, 0, `codex exec failed:\n${failure}`);
    assert.equal(report.exchanges.length, 2, `the cut request and one retry: ${report.exchanges.map((e) => `${e.method} ${e.url} ${e.status}`).join(", ")}\n${failure}`);
    const [first, retry] = report.exchanges as [(typeof report.exchanges)[0], (typeof report.exchanges)[0]];
    assert.equal(first.ended, false, "the first stream was broken off, not ended by the server");
    assert.equal(first.responseHeaders["x-request-id"], cut.requestId);
    assert.equal(retry.url, first.url);
    // Codex's retry is not byte for byte the same request (measured: it differs); what it changes is reported below.
    const firstBody = JSON.parse(first.requestBody) as Record<string, unknown>;
    const retryBody = JSON.parse(retry.requestBody) as Record<string, unknown>;
    const changed = [...new Set([...Object.keys(firstBody), ...Object.keys(retryBody)])].filter((key) => JSON.stringify(firstBody[key]) !== JSON.stringify(retryBody[key]));
    assert.equal(retry.status, 200);
    assert.ok(retry.ended, "the retry's stream ended");

    const events = parseSse(retry.responseBody).map((frame) => JSON.parse(frame.data) as ResponseEvent);
    const last = events.at(-1);
    assert.equal(last?.type, "response.completed", `the retry completed: ${JSON.stringify(last)}`);
    const usage = last.response?.usage;
    const cached = usage?.input_tokens_details?.cached_tokens ?? 0;
    assert.ok(cached >= readBefore, `the retry reused ${cached} tokens, but ${readBefore} of ${total} had been read before the cut`);
    // The server's own account agrees: the retry's reading started from what was kept.
    const retryReads = report.promptReads.filter((read) => read.requestId === retry.responseHeaders["x-request-id"]);
    const retryLogged = retryReads[0]?.cached;
    if (retryLogged !== undefined) assert.ok(retryLogged >= readBefore, `the retry's reading started with ${retryLogged} cached`);

    const streamed = events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta).join("");
    assert.ok(streamed.trim() !== "", "the model answered");
    assert.equal(report.codex.lastMessage, streamed, "Codex's final message is the streamed text");
    assert.equal(report.codex.stdout, `${streamed}\n`, "and exactly that is what codex exec prints");
    const lastBefore = beforeCut.at(-1)!;
    process.stderr.write(
      `# codex stream cut: ${total} prompt tokens (the retry: ${String(usage?.input_tokens)}; its body's changed keys: ${changed.join(", ") || "none"}); ${readBefore} read before the cut (last log ${(cut.atMs - lastBefore.atMs).toFixed(0)} ms before it); the retry had ${cached} cached (logged: ${String(retryLogged)}); the scenario took ${seconds.toFixed(0)} s\n`,
    );
  });
});
