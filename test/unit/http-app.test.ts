import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentEvent, EmitEvent } from "../../src/agent/events.js";
import type { TurnRequest } from "../../src/agent/turn-request.js";
import type { StatelessTurnRequest } from "../../src/agent/stateless-turn.js";
import { TurnTally, type SessionTurnOutcome, type TurnOutcome } from "../../src/agent/turn-outcome.js";
import { createHttpApp } from "../../src/http/app.js";
import type { RuntimeHealth } from "../../src/diagnostics/runtime-health.js";
import type { HttpDeps, HttpSettings, TurnRunner } from "../../src/http/http-deps.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { abortedWithin } from "../helpers/aborted-within.js";

/** What a script decides of a turn; usage and reasoning are summed from the events it emits, as the runner does. */
type ScriptResult = Pick<SessionTurnOutcome, "response" | "session_id" | "trace_id" | "warnings" | "pending_approval"> & { finish_reason?: TurnOutcome["finish_reason"] };

/** A scripted SessionRunner: emits the given events, then returns (or throws). */
class ScriptedRunner implements TurnRunner {
  requests: TurnRequest[] = [];
  stateless: StatelessTurnRequest[] = [];
  signals: AbortSignal[] = [];
  constructor(private readonly script: (request: TurnRequest, emit: EmitEvent, signal: AbortSignal) => Promise<ScriptResult>) {}
  async runTurn(request: TurnRequest, options: { signal: AbortSignal; emit: EmitEvent }): Promise<SessionTurnOutcome> {
    this.requests.push(request);
    this.signals.push(options.signal);
    const tally = new TurnTally();
    const result = await this.script(request, tally.wrap(options.emit), options.signal);
    return { finish_reason: result.pending_approval === undefined ? "stop" : "paused", reasoning: tally.reasoning, usage: tally.usage, ...result };
  }
  /** The same script for a client-kept conversation (the session id it sees is absent). */
  async runStateless(request: StatelessTurnRequest, options: { signal: AbortSignal; emit: EmitEvent }): Promise<TurnOutcome> {
    this.stateless.push(request);
    this.signals.push(options.signal);
    const tally = new TurnTally();
    const { response, trace_id, warnings, finish_reason } = await this.script({ agent: request.agent }, tally.wrap(options.emit), options.signal);
    return { response, trace_id, warnings, finish_reason: finish_reason ?? "stop", reasoning: tally.reasoning, usage: tally.usage, session_id: null };
  }
}

const TEXT_EVENTS = (sessionId: string): AgentEvent[] => [
  { event: "run_start", user_input: "hi", trace_id: "abcd", session_id: sessionId, agent: "assistant" },
  { event: "memory_start", snippets: 0 },
  { event: "llm_start", step: 0 },
  { event: "llm_chunk", step: 0, delta: "Hel" },
  { event: "llm_chunk", step: 0, delta: "lo" },
  { event: "usage", step: 0, input_tokens: 7, output_tokens: 2 },
  { event: "llm_done", step: 0 },
  { event: "final", step: 0, response: "Hello" },
];

const helloRunner = (): ScriptedRunner =>
  new ScriptedRunner((request, emit) => {
    const sessionId = request.session_id ?? "x";
    for (const event of TEXT_EVENTS(sessionId)) emit(event);
    return Promise.resolve({ response: "Hello", session_id: sessionId, trace_id: "abcd", warnings: [] });
  });

const READY: RuntimeHealth = { warmUp: "ready", defaultModel: "default", engines: { default: { state: "ready", degradationTier: "NORMAL" } }, tools: [] };

function makeApp(runner: TurnRunner, settings: Partial<HttpSettings> = {}, health: RuntimeHealth = READY) {
  const deps: HttpDeps = {
    settings: { host: "127.0.0.1", port: 8080, bearerToken: null, corsOrigins: [], allowedHosts: [], maxBodyBytes: 1024, sessionQueue: false, ...settings },
    agents: { assistant: "default", other: "default" },
    runner: () => runner,
    health: () => health,
    version: "0.0.0-test",
    logger: captureLogger().logger,
  };
  return createHttpApp(deps).app;
}

const HOST = { Host: "127.0.0.1:8080" };
const post = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { ...HOST, "Content-Type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});
const chat = (extra: Record<string, unknown> = {}) => ({ model: "assistant", messages: [{ role: "system", content: "s" }, { role: "user", content: "old" }, { role: "assistant", content: "a" }, { role: "user", content: "hi" }], ...extra });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; param: string | null; type: string; message: string } }).error;

describe("HTTP app (app.request, scripted runner)", () => {
  it("non-stream: a chat.completion with local_ai, usage summed, only the last user message sent", async () => {
    const runner = helloRunner();
    const res = await makeApp(runner).request("/v1/chat/completions", post(chat({ session_id: "s1", user: "u1" })));
    assert.equal(res.status, 200);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body.id, "chatcmpl-abcd");
    assert.equal(body.object, "chat.completion");
    assert.deepEqual(body.choices, [{ index: 0, message: { role: "assistant", content: "Hello", refusal: null }, logprobs: null, finish_reason: "stop" }]);
    assert.deepEqual(body.usage, { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
    // The request's id, as the X-Request-Id header carries it (the client sent none: generated).
    assert.match(res.headers.get("x-request-id") ?? "", /^req_[0-9a-f]{24}$/);
    assert.deepEqual(body.local_ai, { request_id: res.headers.get("x-request-id"), session_id: "s1", trace_id: "abcd", warnings: [], degradation_tier: "NORMAL" });
    assert.deepEqual(runner.requests[0], { user_id: "u1", session_id: "s1", agent: "assistant", input: "hi", resume: undefined, approve_execution: undefined, keep_alive: undefined, overrides: {} });
  });

  it("default stream: role chunk, content chunks, final chunk, usage chunk, [DONE]; nothing else", async () => {
    const res = await makeApp(helloRunner()).request("/v1/chat/completions", post(chat({ stream: true, stream_options: { include_usage: true } })));
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const text = await res.text();
    assert.doesNotMatch(text, /^event:/m);
    const frames = text.split("\n\n").filter((f) => f !== "");
    assert.equal(frames.at(-1), "data: [DONE]");
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.replace(/^data: /, "")) as { id: string; choices: Array<{ delta: Record<string, unknown>; finish_reason: string | null }>; usage?: unknown });
    assert.deepEqual(chunks.map((c) => c.choices[0]?.delta ?? null), [{ role: "assistant", content: "" }, { content: "Hel" }, { content: "lo" }, {}, null]);
    assert.equal(chunks[3]?.choices[0]?.finish_reason, "stop");
    assert.deepEqual(chunks[4]?.usage, { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
    assert.ok(chunks.every((c) => c.id === "chatcmpl-abcd"));
  });

  it("events stream (header opt-in): named events with stdio fields, chunks, event: result, [DONE]", async () => {
    const res = await makeApp(helloRunner()).request("/v1/chat/completions", post(chat({ stream: true, session_id: "s2" }), { "X-Local-AI-Events": "1", "X-Request-Id": "client-id-7" }));
    assert.equal(res.headers.get("x-request-id"), "client-id-7");
    const frames = (await res.text()).split("\n\n").filter((f) => f !== "");
    const names = frames.map((f) => (f.startsWith("event: ") ? f.slice(7, f.indexOf("\n")) : f.startsWith("data: [DONE]") ? "[DONE]" : "chunk"));
    assert.deepEqual(names, ["run_start", "chunk", "memory_start", "llm_start", "llm_chunk", "chunk", "llm_chunk", "chunk", "usage", "llm_done", "final", "chunk", "result", "[DONE]"]);
    assert.equal(frames[0], `event: run_start\ndata: ${JSON.stringify({ user_input: "hi", trace_id: "abcd", session_id: "s2", agent: "assistant" })}`);
    const result = JSON.parse(frames[12]?.split("\ndata: ")[1] ?? "") as Record<string, unknown>;
    assert.equal(result.response, "Hello");
    assert.equal(result.object, "chat.completion");
    assert.deepEqual(result.local_ai, { request_id: "client-id-7", session_id: "s2", trace_id: "abcd", warnings: [], degradation_tier: "NORMAL" });
  });

  it("an error after the stream started is a data: {error} frame and no [DONE]", async () => {
    const runner = new ScriptedRunner((request, emit) => {
      emit({ event: "run_start", user_input: "hi", trace_id: "t1", session_id: "s", agent: "assistant" });
      // The answer starts at the first model step (docs/http-api.md "When a stream starts").
      emit({ event: "llm_start", step: 0 });
      return Promise.reject(new RuntimeError("engine_unavailable", "engine down"));
    });
    const res = await makeApp(runner).request("/v1/chat/completions", post(chat({ stream: true })));
    const text = await res.text();
    assert.doesNotMatch(text, /\[DONE\]/);
    const last = text.trim().split("\n\n").at(-1) ?? "";
    assert.deepEqual(JSON.parse(last.slice(6)), { error: { message: "engine down", type: "server_error", param: null, code: "engine_unavailable", request_id: res.headers.get("x-request-id") } });
  });

  it("an error before run_start keeps a real status even when streaming", async () => {
    const runner = new ScriptedRunner(() => Promise.reject(new RuntimeError("invalid_request", "Nothing to resume")));
    const res = await makeApp(runner).request("/v1/chat/completions", post(chat({ stream: true, resume: true })));
    assert.equal(res.status, 400);
    assert.equal((await errorOf(res)).code, "invalid_request");
  });

  it("maps every error to an OpenAI body and status", async () => {
    const app = makeApp(new ScriptedRunner(() => Promise.reject(new Error("secret stack detail"))));
    const cases: Array<[string, RequestInit | undefined, number, string, string | null]> = [
      ["/v1/chat/completions", post("{not json"), 400, "invalid_json", null],
      ["/v1/chat/completions", post({ model: "assistant" }), 400, "invalid_request", "messages"],
      ["/v1/chat/completions", post({ model: "assistant", messages: [{ role: "user", content: [{ type: "audio" }] }] }), 400, "invalid_request", "messages.0.content"],
      ["/v1/chat/completions", post(chat({ session_id: "../etc" })), 400, "invalid_request", "session_id"],
      ["/v1/chat/completions", post(chat({ n: 2 })), 400, "invalid_request", "n"],
      ["/v1/chat/completions", post(chat({ logprobs: true })), 400, "invalid_request", "logprobs"],
      ["/v1/chat/completions", post(chat({ temperature: 3 })), 400, "invalid_request", "temperature"],
      ["/v1/chat/completions", post(chat({ tools: [{ type: "function", function: { name: "f" } }], tool_choice: { type: "function", function: { name: "g" } } })), 400, "invalid_request", "tool_choice"],
      ["/v1/chat/completions", post(chat({ session_id: "s", tools: [{ type: "function", function: { name: "f" } }] })), 400, "invalid_request", "tools"],
      ["/v1/chat/completions", post(chat({ resume: true })), 400, "invalid_request", "resume"],
      ["/v1/chat/completions", post(chat({ model: "nope" })), 404, "model_not_found", "model"],
      ["/v1/nothing", { headers: HOST }, 404, "not_found", null],
      ["/v1/chat/completions", post(chat({ pad: "x".repeat(2000) })), 413, "payload_too_large", null],
      ["/v1/chat/completions", post(chat()), 500, "internal_error", null],
    ];
    for (const [path, init, status, code, param] of cases) {
      const res = await app.request(path, init);
      assert.equal(res.status, status, `${path} ${code}`);
      const error = await errorOf(res);
      assert.equal(error.code, code);
      assert.equal(error.param, param, code);
      assert.doesNotMatch(error.message, /secret stack/);
    }
  });

  it("503 engine_unavailable from the runner", async () => {
    const app = makeApp(new ScriptedRunner(() => Promise.reject(new RuntimeError("engine_unavailable", "circuit open"))));
    const res = await app.request("/v1/chat/completions", post(chat()));
    assert.equal(res.status, 503);
    assert.equal((await errorOf(res)).code, "engine_unavailable");
  });

  it("409 when the session has a turn in flight (queue off); queued when on", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = (): ScriptedRunner =>
      new ScriptedRunner(async (request) => {
        await gate;
        return { response: "ok", session_id: request.session_id ?? "", trace_id: "t", warnings: [] };
      });
    const app = makeApp(slow());
    const first = app.request("/v1/chat/completions", post(chat({ session_id: "busy" })));
    await new Promise((resolve) => setImmediate(resolve));
    const second = await app.request("/v1/chat/completions", post(chat({ session_id: "busy" })));
    assert.equal(second.status, 409);
    assert.equal((await errorOf(second)).code, "session_busy");
    const other = app.request("/v1/chat/completions", post(chat({ session_id: "other" })));
    release();
    assert.equal((await first).status, 200);
    assert.equal((await other).status, 200);
    const again = await app.request("/v1/chat/completions", post(chat({ session_id: "busy" })));
    assert.equal(again.status, 200, "the session is free again after the turn");
    const queued = makeApp(slow(), { sessionQueue: true });
    const [a, b] = await Promise.all([queued.request("/v1/chat/completions", post(chat({ session_id: "q" }))), queued.request("/v1/chat/completions", post(chat({ session_id: "q" })))]);
    assert.deepEqual([a.status, b.status], [200, 200]);
  });

  it("bearer auth on /v1/* only, with WWW-Authenticate; /health stays open", async () => {
    const app = makeApp(helloRunner(), { bearerToken: "s3cret" });
    for (const auth of [undefined, "Bearer wrong", "Bearer s3cret-longer", "Basic s3cret"]) {
      const res = await app.request("/v1/models", { headers: { ...HOST, ...(auth ? { Authorization: auth } : {}) } });
      assert.equal(res.status, 401, String(auth));
      assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
      assert.equal((await errorOf(res)).type, "authentication_error");
    }
    const ok = await app.request("/v1/models", { headers: { ...HOST, Authorization: "Bearer s3cret" } });
    assert.equal(ok.status, 200);
    assert.deepEqual(((await ok.json()) as { data: Array<{ id: string; object: string; owned_by: string }> }).data.map((m) => [m.id, m.object, m.owned_by]), [["assistant", "model", "local-ai"], ["other", "model", "local-ai"]]);
    assert.equal((await app.request("/health", { headers: HOST })).status, 200);
  });

  it("Host check: loopback names, IP literals and allowed_hosts pass on any port, other names get 403", async () => {
    const app = makeApp(helloRunner(), { allowedHosts: ["My.Box:3000", "fd00::7"] });
    const passing = [
      "127.0.0.1:8080", "localhost:8080", "[::1]:8080", "localhost", "LocalHost:8080", "my.box:8080", "my.box",
      // A forward (ssh -L 9000:localhost:8080, docker -p 9000:8080) changes the port only.
      "localhost:9999", "127.0.0.1:9000",
      // IP literals cannot be rebound: a LAN client of a server bound to 0.0.0.0.
      "192.168.1.20:8080", "10.0.0.1", "[fe80::1]:8080", "[fd00::7]",
    ];
    for (const host of passing) {
      assert.equal((await app.request("/health", { headers: { Host: host } })).status, 200, host);
    }
    // No Host at all (HTTP/1.0; app.request sends none): never a browser.
    assert.equal((await app.request("/health")).status, 200);
    for (const host of ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "localhost.evil.example", "my.box.evil.example", "127.0.0.1:8080:8080", "[::1", "evil.example/127.0.0.1", "2130706433.example"]) {
      const res = await app.request("/health", { headers: { Host: host } });
      assert.equal(res.status, 403, host);
      assert.equal((await errorOf(res)).code, "host_not_allowed");
    }
  });

  it("/health in_flight counts a turn from its start until it has settled, also after its client left", async () => {
    let finish: () => void = () => undefined;
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    const runner = new ScriptedRunner(async (request, emit, signal) => {
      // run_start, memory_start, llm_start: the stream's answer has started.
      for (const event of TEXT_EVENTS(request.session_id ?? "x").slice(0, 3)) emit(event);
      started();
      // Settles only when told: a turn that ignores its client leaving must stay counted.
      await new Promise<void>((resolve) => (finish = resolve));
      assert.equal(signal.aborted, true);
      throw new RuntimeError("cancelled", "cancelled");
    });
    const app = makeApp(runner);
    const inFlight = async (): Promise<number> => ((await (await app.request("/health", { headers: HOST })).json()) as { in_flight: number }).in_flight;
    assert.equal(await inFlight(), 0);
    const client = new AbortController();
    const res = await app.request("/v1/chat/completions", { ...post(chat({ session_id: "s9", stream: true })), signal: client.signal });
    await running;
    assert.equal(res.status, 200);
    assert.equal(await inFlight(), 1);
    client.abort();
    await res.body?.cancel().catch(() => undefined);
    assert.equal(await inFlight(), 1, "the turn has not settled yet");
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await inFlight(), 0);
    // Refused before any work (409, 400): never counted.
    assert.equal((await app.request("/v1/chat/completions", post("{oops"))).status, 400);
    assert.equal(await inFlight(), 0);
  });

  it("CORS headers only for configured origins", async () => {
    const plain = await makeApp(helloRunner()).request("/v1/models", { headers: { ...HOST, Origin: "http://a.example" } });
    assert.equal(plain.headers.get("access-control-allow-origin"), null);
    const app = makeApp(helloRunner(), { corsOrigins: ["http://a.example"], bearerToken: "t" });
    const preflight = await app.request("/v1/chat/completions", { method: "OPTIONS", headers: { ...HOST, Origin: "http://a.example", "Access-Control-Request-Method": "POST" } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "http://a.example");
    const other = await app.request("/v1/models", { headers: { ...HOST, Origin: "http://b.example", Authorization: "Bearer t" } });
    assert.notEqual(other.headers.get("access-control-allow-origin"), "http://b.example");
  });

  it("refuses cross-site requests: a foreign Origin (403) and a body that is not application/json (415); no turn runs", async () => {
    const runner = helloRunner();
    const app = makeApp(runner, { corsOrigins: ["http://a.example"] });
    // What a page can send without a preflight: text/plain, a form, a multipart form.
    for (const type of ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const res = await app.request("/v1/chat/completions", post(chat(), { "Content-Type": type }));
      assert.equal(res.status, 415, type);
      assert.equal((await errorOf(res)).code, "unsupported_media_type");
    }
    const none = await app.request("/v1/chat/completions", { method: "POST", headers: HOST, body: JSON.stringify(chat()) });
    assert.equal(none.status, 415, "a body without a Content-Type");
    for (const origin of ["http://evil.example", "null", "http://a.example.evil.example"]) {
      for (const init of [post(chat(), { Origin: origin }), { method: "GET", headers: { ...HOST, Origin: origin } }] as RequestInit[]) {
        const res = await app.request(init.method === "POST" ? "/v1/chat/completions" : "/v1/models", init);
        assert.equal(res.status, 403, `${origin} ${String(init.method)}`);
        assert.equal((await errorOf(res)).code, "origin_not_allowed");
      }
    }
    // A foreign page's preflight gets no CORS grant; an allowed origin's does, and its JSON request runs.
    const preflight = await app.request("/v1/chat/completions", { method: "OPTIONS", headers: { ...HOST, Origin: "http://evil.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" } });
    assert.equal(preflight.status, 403);
    assert.equal(preflight.headers.get("access-control-allow-origin"), null);
    assert.equal(runner.requests.length + runner.stateless.length, 0, "no refused request reached the agent");
    const allowed = await app.request("/v1/chat/completions", post(chat(), { Origin: "http://a.example", "Content-Type": "application/json; charset=utf-8" }));
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get("access-control-allow-origin"), "http://a.example");
    assert.equal(runner.stateless.length, 1);
    // Clients outside a browser send no Origin and are served as before; /health stays open.
    assert.equal((await makeApp(helloRunner()).request("/v1/chat/completions", post(chat()))).status, 200);
    assert.equal((await app.request("/health", { headers: { ...HOST, Origin: "http://evil.example" } })).status, 200);
  });

  it("/health: 200 ok, 503 starting / down, same body shape", async () => {
    const ok = await makeApp(helloRunner()).request("/health", { headers: HOST });
    assert.equal(ok.status, 200);
    const body = (await ok.json()) as Record<string, unknown>;
    assert.equal(body.status, "ok");
    assert.equal(body.degradation_tier, "NORMAL");
    assert.equal(body.version, "0.0.0-test");
    const starting = await makeApp(helloRunner(), {}, { ...READY, warmUp: "starting", engines: {} }).request("/health", { headers: HOST });
    assert.equal(starting.status, 503);
    assert.equal(((await starting.json()) as { status: string }).status, "starting");
    const open = await makeApp(helloRunner(), {}, { ...READY, engines: { default: { state: "ready", degradationTier: "NORMAL", circuit: "open" } } }).request("/health", { headers: HOST });
    assert.equal(open.status, 503);
    assert.deepEqual(((await open.json()) as { status: string; engine: unknown }).engine, { model: "default", state: "ready", loaded: true, degradation_tier: "NORMAL", circuit: "open" });
  });

  it("a stream whose reader cancels aborts the turn's signal", async () => {
    const runner = new ScriptedRunner(
      (request, emit, signal) =>
        new Promise((_, reject) => {
          emit({ event: "run_start", user_input: "hi", trace_id: "t", session_id: "s", agent: "assistant" });
          emit({ event: "llm_start", step: 0 });
          const timer = setInterval(() => emit({ event: "llm_chunk", step: 0, delta: "x" }), 1);
          signal.addEventListener("abort", () => {
            clearInterval(timer);
            reject(new RuntimeError("cancelled", "cancelled"));
          });
        }),
    );
    const res = await makeApp(runner).request("/v1/chat/completions", post(chat({ stream: true })));
    const reader = res.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    const signal = runner.signals[0];
    assert.ok(signal !== undefined, "the turn started");
    assert.equal(await abortedWithin(signal), true);
  });
});
