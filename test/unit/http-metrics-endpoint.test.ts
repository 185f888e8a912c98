import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentEvent, EmitEvent } from "../../src/agent/events.js";
import { TurnTally, type TurnOutcome } from "../../src/agent/turn-outcome.js";
import { PromMetrics } from "../../src/app/metrics/prom-metrics.js";
import { createHttpApp } from "../../src/http/app.js";
import type { HttpDeps, HttpSettings, TurnRunner } from "../../src/http/http-deps.js";
import { requestIdFor } from "../../src/http/request/request-id.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { captureLogger, type CapturedLogger } from "../helpers/capture-logger.js";
import { parsePromText, sampleValue } from "../helpers/prom-text.js";

const EVENTS: AgentEvent[] = [
  { event: "run_start", user_input: "hi", trace_id: "abcd", session_id: null, agent: "assistant" },
  { event: "llm_start", step: 0 },
  { event: "llm_chunk", step: 0, delta: "Hel" },
  { event: "usage", step: 0, input_tokens: 7, output_tokens: 2, cached_input_tokens: 3 },
  { event: "llm_chunk", step: 0, delta: "lo" },
  { event: "usage", step: 1, input_tokens: 11, output_tokens: 1 },
  { event: "final", step: 1, response: "Hello" },
];

/** A runner that emits EVENTS and answers, or (`fail`) throws after run_start. */
function runner(fail = false): TurnRunner {
  const run = async (emit: EmitEvent): Promise<TurnOutcome> => {
    const tally = new TurnTally();
    const counted = tally.wrap(emit);
    counted(EVENTS[0] as AgentEvent);
    counted(EVENTS[1] as AgentEvent);
    // Let the SSE answer start before the failure (it starts at the first model step, llm_start).
    await new Promise((resolve) => setImmediate(resolve));
    if (fail) throw new RuntimeError("engine_error", "the engine fell over");
    for (const event of EVENTS.slice(2)) counted(event);
    return { finish_reason: "stop", response: "Hello", reasoning: "", usage: tally.usage, session_id: null, trace_id: "abcd", warnings: [] };
  };
  return {
    runTurn: async (_request, options) => ({ ...(await run(options.emit)), session_id: "s" }),
    runStateless: (_request, options) => run(options.emit),
  };
}

function makeApp(options: { metrics?: PromMetrics; settings?: Partial<HttpSettings>; fail?: boolean; log?: CapturedLogger } = {}) {
  const deps: HttpDeps = {
    settings: { host: "127.0.0.1", port: 8080, bearerToken: null, corsOrigins: [], allowedHosts: [], maxBodyBytes: 4096, sessionQueue: false, ...options.settings },
    agents: { assistant: "default" },
    runner: () => runner(options.fail),
    health: () => ({ warmUp: "ready", defaultModel: "default", engines: {}, tools: [] }),
    version: "0.0.0-test",
    logger: (options.log ?? captureLogger()).logger,
    ...(options.metrics ? { metrics: { recorder: options.metrics, exposition: () => options.metrics!.exposition() } } : {}),
  };
  return createHttpApp(deps).app;
}

const HOST = { Host: "127.0.0.1:8080" };
const chat = (extra: Record<string, unknown> = {}): RequestInit => ({
  method: "POST",
  headers: { ...HOST, "Content-Type": "application/json" },
  body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "hi" }], ...extra }),
});

describe("request ids", () => {
  it("keeps a client's safe id and generates one for anything else", () => {
    for (const safe of ["a", "trace:1.2_3-Z", "x".repeat(128)]) assert.equal(requestIdFor(safe), safe);
    for (const unsafe of [undefined, "", "x".repeat(129), "two words", "a,b", "new\nline", "ümlaut", "quote\""]) assert.match(requestIdFor(unsafe), /^req_[0-9a-f]{24}$/, String(unsafe));
    assert.notEqual(requestIdFor(undefined), requestIdFor(undefined));
  });

  it("a mid-stream error frame carries error.request_id; the route's log lines and the access line carry request_id", async () => {
    const log = captureLogger("info");
    const res = await makeApp({ fail: true, log }).request("/v1/chat/completions", { ...chat({ stream: true }), headers: { ...HOST, "Content-Type": "application/json", "X-Request-Id": "mid-1" } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-request-id"), "mid-1");
    const frames = (await res.text()).split("\n\n").filter((frame) => frame.startsWith("data: {"));
    const error = JSON.parse((frames.at(-1) ?? "").slice(6)) as { error: { code: string; request_id: string } };
    assert.deepEqual([error.error.code, error.error.request_id], ["engine_error", "mid-1"]);
    const lines = log.records();
    const failed = lines.find((line) => line.msg === "turn failed mid-stream");
    assert.equal(failed?.request_id, "mid-1", "a route's own log line");
    const access = lines.filter((line) => line.msg === "request");
    assert.equal(access.length, 1);
    assert.equal(access[0]?.request_id, "mid-1");
  });
});

describe("GET /metrics (app.request)", () => {
  it("is absent unless http.metrics: a 404 like any unknown route, with its request id", async () => {
    const res = await makeApp().request("/metrics", { headers: HOST });
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { code: string; request_id: string } };
    assert.equal(body.error.code, "not_found");
    assert.equal(body.error.request_id, res.headers.get("x-request-id"));
  });

  it("needs the bearer token unless http.metrics_public", async () => {
    const closed = makeApp({ metrics: new PromMetrics(() => null), settings: { bearerToken: "tok" } });
    assert.equal((await closed.request("/metrics", { headers: HOST })).status, 401);
    assert.equal((await closed.request("/metrics", { headers: { ...HOST, Authorization: "Bearer tok" } })).status, 200);
    const open = makeApp({ metrics: new PromMetrics(() => null), settings: { bearerToken: "tok", metricsPublic: true } });
    assert.equal((await open.request("/metrics", { headers: HOST })).status, 200);
    // /v1/* stays behind the token.
    assert.equal((await open.request("/v1/models", { headers: HOST })).status, 401);
  });

  it("counts a chat's tokens (every step's usage) and its first token under agent, model, endpoint and key; each server has its own registry", async () => {
    const metrics = new PromMetrics(() => ({ queued: ["default", "default"], memoryBytes: { default: 1234, other: 0 } }));
    const other = new PromMetrics(() => null);
    const app = makeApp({ metrics });
    assert.equal((await app.request("/v1/chat/completions", chat())).status, 200);
    const families = parsePromText((await metrics.exposition()).body);
    const labels = { agent: "assistant", model: "default", endpoint: "/v1/chat/completions", key: "none" };
    assert.equal(sampleValue(families, "local_ai_prompt_tokens_total", labels), 18);
    assert.equal(sampleValue(families, "local_ai_cached_prompt_tokens_total", labels), 3);
    assert.equal(sampleValue(families, "local_ai_generated_tokens_total", labels), 3);
    assert.equal(sampleValue(families, "local_ai_time_to_first_token_seconds_count", labels), 1);
    assert.equal(sampleValue(families, "local_ai_requests_total", { ...labels, status: "200" }), 1);
    assert.equal(sampleValue(families, "local_ai_queue_depth", { model: "default" }), 2);
    assert.equal(sampleValue(families, "local_ai_queue_depth", { model: "other" }), 0);
    assert.equal(sampleValue(families, "local_ai_model_memory_bytes", { model: "default" }), 1234);
    const untouched = parsePromText((await other.exposition()).body);
    assert.equal(sampleValue(untouched, "local_ai_prompt_tokens_total", labels), 0);
    assert.equal(untouched.get("local_ai_prompt_tokens_total")?.samples.length, 0);
  });

  it("tool calls, approvals waiting and the snapshot as JSON", async () => {
    const metrics = new PromMetrics(() => null);
    metrics.toolCall({ agent: "assistant", server: "files", tool: "read_file", outcome: "ok" });
    metrics.toolCall({ agent: "assistant", server: "files", tool: "read_file", outcome: "ok" });
    const answered = metrics.approvalWaiting();
    const waiting = metrics.approvalWaiting();
    answered();
    answered();
    const snapshot = await metrics.snapshot();
    const series = (name: string) => snapshot.metrics.find((entry) => entry.name === name);
    assert.deepEqual(series("local_ai_tool_calls_total")?.samples, [{ name: "local_ai_tool_calls_total", labels: { agent: "assistant", server: "files", tool: "read_file", outcome: "ok" }, value: 2 }]);
    assert.equal(series("local_ai_approvals_waiting")?.samples[0]?.value, 1, "an answered approval counts down once");
    waiting();
    assert.equal((await metrics.snapshot()).metrics.find((entry) => entry.name === "local_ai_approvals_waiting")?.samples[0]?.value, 0);
    assert.equal(series("process_cpu_user_seconds_total")?.type, "counter");
  });
});
