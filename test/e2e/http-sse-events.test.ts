import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { before, describe, it } from "node:test";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { agentsYaml, echoToolYaml } from "../helpers/agents-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { configYaml } from "../helpers/config-yaml.js";

let server: HttpServer;
let tools: HttpServer;

before(async () => {
  const [demo, tiny, toolModel] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 }), ensureFixture("demo", { toolMode: true })]);
  const toolYaml = `${echoToolYaml(toolModel)}${configYaml({ http: { max_body_bytes: 4096 } })}`;
  [server, tools] = await Promise.all([startHttpServer(agentsYaml(demo, tiny)), startHttpServer(toolYaml)]);
});

interface Frame {
  event: string | null;
  data: string;
}
const parse = (text: string): Frame[] =>
  text
    .split("\n\n")
    .filter((block) => block !== "")
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? null;
      return { event, data: lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n") };
    });

const post = (s: HttpServer, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${s.base}/v1/chat/completions`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });

const hello = { model: "assistant", messages: [{ role: "user", content: "Hello!" }] };

describe("serve-http SSE (raw fetch, built CLI)", () => {
  it("events stream: named events with stdio fields, chunks, event: result, [DONE]", async () => {
    const res = await post(server, { ...hello, stream: true, events: true, session_id: "ev1" });
    assert.equal(res.status, 200);
    const frames = parse(await res.text());
    const trail = frames.map((f) => f.event ?? (f.data === "[DONE]" ? "[DONE]" : "chunk"));
    const compact = trail.filter((n, i) => !(n === "llm_chunk" || (n === "chunk" && trail[i - 1] === "llm_chunk")));
    assert.deepEqual(compact, ["run_start", "chunk", "memory_start", "llm_start", "usage", "llm_done", "final", "chunk", "result", "[DONE]"]);
    const runStart = JSON.parse(frames[0]?.data ?? "") as Record<string, unknown>;
    assert.deepEqual(Object.keys(runStart).sort(), ["agent", "session_id", "trace_id", "user_input"]);
    assert.equal(runStart.session_id, "ev1");
    const deltas = frames.filter((f) => f.event === "llm_chunk").map((f) => (JSON.parse(f.data) as { delta: string }).delta);
    assert.equal(deltas.join(""), DEMO_SENTENCE);
    const chunkText = frames.filter((f) => f.event === null && f.data !== "[DONE]").map((f) => (JSON.parse(f.data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? "").join("");
    assert.equal(chunkText, DEMO_SENTENCE);
    const result = JSON.parse(frames.find((f) => f.event === "result")?.data ?? "") as Record<string, unknown>;
    assert.equal(result.response, DEMO_SENTENCE);
    assert.equal(result.session_id, "ev1");
    assert.equal(result.trace_id, runStart.trace_id);
    assert.deepEqual(result.warnings, []);
    assert.equal(result.object, "chat.completion");
    assert.equal(result.id, `chatcmpl-${String(runStart.trace_id)}`);
  });

  it("default stream has no named events; the header opt-in gives them", async () => {
    const plain = await (await post(server, { ...hello, stream: true })).text();
    assert.doesNotMatch(plain, /^event:/m);
    assert.ok(plain.endsWith("data: [DONE]\n\n"));
    const opted = await (await post(server, { ...hello, stream: true }, { "X-Local-AI-Events": "1" })).text();
    assert.match(opted, /^event: run_start$/m);
  });

  it("a real tool call over HTTP: the demo tool model calls server-everything's echo", async () => {
    const res = await post(tools, { model: "assistant", messages: [{ role: "user", content: "/echo" }], stream: true, events: true, approve_execution: true });
    const frames = parse(await res.text());
    const start = frames.find((f) => f.event === "tool_start");
    const done = frames.find((f) => f.event === "tool_done");
    assert.deepEqual(JSON.parse(start?.data ?? "{}"), { step: 0, tool: "echo", args: { message: "hi" } });
    const doneFields = JSON.parse(done?.data ?? "{}") as { status: string; preview: string };
    assert.equal(doneFields.status, "ok");
    assert.match(doneFields.preview, /Echo: hi/);
    assert.equal((JSON.parse(frames.find((f) => f.event === "result")?.data ?? "{}") as { response: string }).response, DEMO_SENTENCE);
    const health = (await (await fetch(`${tools.base}/health`)).json()) as { status: string; tools: Record<string, { state: string; tools: number }> };
    assert.equal(health.status, "ok");
    assert.equal(health.tools.everything?.state, "ready");
  });

  it("approval over HTTP: the turn pauses with local_ai.pending_approval; resume + approve_execution finishes it", async () => {
    const paused = (await (await post(tools, { model: "assistant", messages: [{ role: "user", content: "/echo" }], session_id: "ap1" })).json()) as {
      choices: Array<{ message: { content: string }; finish_reason: string }>;
      local_ai: { warnings: string[]; pending_approval?: unknown };
    };
    assert.equal(paused.choices[0]?.finish_reason, "stop");
    assert.equal(paused.choices[0]?.message.content, "");
    assert.deepEqual(paused.local_ai.pending_approval, { tool: "echo", args: { message: "hi" } });
    assert.ok(paused.local_ai.warnings.includes("approval_required: echo"));
    const resumed = (await (await post(tools, { model: "assistant", messages: [], session_id: "ap1", resume: true, approve_execution: true })).json()) as {
      choices: Array<{ message: { content: string } }>;
      local_ai: { pending_approval?: unknown };
    };
    assert.equal(resumed.choices[0]?.message.content, DEMO_SENTENCE);
    assert.equal(resumed.local_ai.pending_approval, undefined);
  });

  it("every error status over the socket", async () => {
    const codeOf = async (res: Response): Promise<[number, string]> => [res.status, ((await res.json()) as { error: { code: string } }).error.code];
    assert.deepEqual(await codeOf(await post(server, "{oops")), [400, "invalid_json"]);
    assert.deepEqual(await codeOf(await post(server, { model: "assistant", messages: "x" })), [400, "invalid_request"]);
    assert.deepEqual(await codeOf(await post(server, { ...hello, model: "ghost" })), [404, "model_not_found"]);
    assert.deepEqual(await codeOf(await fetch(`${server.base}/v1/no-such-route`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" })), [404, "not_found"]);
    assert.deepEqual(await codeOf(await post(tools, { ...hello, pad: "x".repeat(5000) })), [413, "payload_too_large"]);
    // 409: a long turn holds the session.
    const long = await post(server, { model: "talker", messages: [{ role: "user", content: "go" }], stream: true, session_id: "busy1" });
    assert.deepEqual(await codeOf(await post(server, { ...hello, session_id: "busy1" })), [409, "session_busy"]);
    await long.body?.cancel();
    // 403: a Host header that is not ours (DNS rebinding); fetch cannot set Host, node:http can.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port: server.port, path: "/health", headers: { Host: "evil.example" } }, (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 403);
  });

  it("a client that never reads its stream does not stop the server serving others", async () => {
    const slow = httpRequest({ host: "127.0.0.1", port: server.port, path: "/v1/chat/completions", method: "POST", headers: { "Content-Type": "application/json" } });
    const head = new Promise<void>((resolve) => slow.on("response", (r) => {
      r.pause();
      resolve();
    }));
    slow.on("error", () => undefined);
    slow.end(JSON.stringify({ model: "talker", messages: [{ role: "user", content: "talk" }], stream: true, session_id: "slow" }));
    await head;
    const started = Date.now();
    for (let i = 0; i < 3; i += 1) {
      const res = await post(server, { ...hello, session_id: `beside${i}` });
      assert.equal(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, DEMO_SENTENCE);
    }
    assert.ok(Date.now() - started < 30_000);
    assert.equal((await fetch(`${server.base}/health`)).status, 200);
    slow.destroy();
  });

  it("SIGTERM exits 0", async () => {
    const exits = await Promise.all([server.stop(), tools.stop()]);
    assert.deepEqual(exits.map((e) => e.code), [0, 0], server.proc.stderr + tools.proc.stderr);
  });
});
