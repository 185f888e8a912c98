// serve-http under load with clients that go away: 50 concurrent clients (raw fetch and the
// official openai v6 client, stream and not, session mode and client-kept conversations) while
// others abort mid-stream, drop the socket right after sending, drop it halfway through the body,
// or abort when the response head arrives. Every request that stays gets the exact answer; every
// one that leaves has its turn cancelled (recorded as docs/http-api.md says: checkpoint kept,
// nothing in the history, the session free again), /health's in_flight returns to 0, no error is
// logged and the server's fds return to where they were. `npm test`: 100 requests;
// `npm run test:stress`: 500 (LOCAL_AI_LOAD_REQUESTS overrides both).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { connect } from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { assembleStandardStream, demoAndTinyYaml, startHttpServer, type HttpServer } from "../helpers/http-server.js";
import { mib, readProcStats } from "../helpers/proc-stats.js";
import { collectLines } from "../helpers/collect-lines.js";

const STRESS = process.env.LOCAL_AI_STRESS === "1";
const TOTAL = Number(process.env.LOCAL_AI_LOAD_REQUESTS ?? (STRESS ? 500 : 100));
const CLIENTS = 50;
const REQUEST_TIMEOUT_MS = 180_000;

/** Ten kinds in rotation: six that stay, four that leave (the last alternating between two ways). */
const KINDS = [
  "fetch", "fetch-stream", "openai", "openai-stream", "fetch-stream-stateless", "openai-stream-stateless",
  "fetch-abort-mid-stream", "openai-break-mid-stream", "socket-closed-after-request", "socket-closed-mid-body|fetch-abort-at-head",
] as const;
type Kind = "fetch" | "fetch-stream" | "openai" | "openai-stream" | "fetch-stream-stateless" | "openai-stream-stateless" | "fetch-abort-mid-stream" | "openai-break-mid-stream" | "socket-closed-after-request" | "socket-closed-mid-body" | "fetch-abort-at-head";
const LEAVING = new Set<Kind>(["fetch-abort-mid-stream", "openai-break-mid-stream", "socket-closed-after-request", "socket-closed-mid-body", "fetch-abort-at-head"]);

function kindOf(i: number): Kind {
  const kind = KINDS[i % KINDS.length]!;
  if (!kind.includes("|")) return kind as Kind;
  const [a, b] = kind.split("|") as [Kind, Kind];
  return Math.floor(i / KINDS.length) % 2 === 0 ? a : b;
}

interface Outcome {
  i: number;
  kind: Kind;
  sessionId: string | null;
  /** The answer's text (requests that stay). */
  text?: string;
  /** Content received before leaving (mid-stream kinds). */
  before?: string;
  error?: string;
  ms: number;
}

let server: HttpServer;
const stderrLines: string[] = [];

before(async () => {
  const [demoPath, tinyPath] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
  // `talker` (tiny model, never stops by itself) serves the requests that leave: a turn that was
  // not cancelled would run 2,000 tokens and land in its session's history, which the test checks.
  server = await startHttpServer({ yaml: demoAndTinyYaml({ demoPath, tinyPath, talkerMaxTokens: 2000 }), env: { LOCAL_AI_LOG_LEVEL: "info" } });
  collectLines(server.proc.stderr, stderrLines);
});

after(async () => {
  await server?.stop();
});

const chatBody = (model: string, sessionId: string | null, stream: boolean): Record<string, unknown> => ({
  model,
  messages: [{ role: "user", content: "Hello" }],
  ...(sessionId === null ? {} : { session_id: sessionId }),
  ...(stream ? { stream: true } : {}),
});

async function postChat(body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
  return fetch(`${server.baseURL}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal });
}

/** Reads SSE data frames as they arrive; with `stopAfterContent`, returns once a content delta has arrived, without reading on. */
async function readContent(reader: ReadableStreamDefaultReader<Uint8Array>, stopAfterContent: boolean): Promise<string> {
  const decoder = new TextDecoder();
  let raw = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    raw += decoder.decode(value, { stream: true });
    if (stopAfterContent && /"delta":\{"content":"[^"]/.test(raw)) return raw;
  }
  return assembleStandardStream(raw).content;
}

/** A request on a raw socket that is destroyed once the whole request (or half its body) is handed to the kernel. */
function socketRequest(body: Record<string, unknown>, whole: boolean): Promise<void> {
  const payload = Buffer.from(JSON.stringify(body));
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`;
  return new Promise((resolve) => {
    const socket = connect(server.port, "127.0.0.1");
    socket.on("error", () => undefined);
    socket.on("close", () => resolve());
    socket.write(Buffer.concat([Buffer.from(head), whole ? payload : payload.subarray(0, payload.length >> 1)]), () => socket.destroy());
  });
}

async function runOne(i: number, client: OpenAI): Promise<Outcome> {
  const kind = kindOf(i);
  const stateless = kind.endsWith("-stateless");
  const sessionId = stateless ? null : LEAVING.has(kind) ? `cut${i}` : `load${i}`;
  const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  const t0 = performance.now();
  const done = (fields: Partial<Outcome>): Outcome => ({ i, kind, sessionId, ms: performance.now() - t0, ...fields });
  try {
    switch (kind) {
      case "fetch":
      case "fetch-stream":
      case "fetch-stream-stateless": {
        const stream = kind !== "fetch";
        const response = await postChat(chatBody("assistant", sessionId, stream), timeout);
        if (response.status !== 200) return done({ error: `HTTP ${response.status}: ${(await response.text()).slice(0, 300)}` });
        if (stream) return done({ text: await readContent(response.body!.getReader(), false) });
        const json = (await response.json()) as { choices: Array<{ message: { content: string } }> };
        return done({ text: json.choices[0]?.message.content ?? "" });
      }
      case "openai": {
        const params: ChatCompletionCreateParamsNonStreaming & { session_id?: string } = chatBody("assistant", sessionId, false) as never;
        const completion = await client.chat.completions.create(params, { signal: timeout });
        return done({ text: completion.choices[0]?.message.content ?? "" });
      }
      case "openai-stream":
      case "openai-stream-stateless": {
        const params: ChatCompletionCreateParamsStreaming & { session_id?: string } = chatBody("assistant", sessionId, true) as never;
        let text = "";
        for await (const chunk of await client.chat.completions.create(params, { signal: timeout })) text += chunk.choices[0]?.delta?.content ?? "";
        return done({ text });
      }
      case "fetch-abort-mid-stream": {
        const controller = new AbortController();
        const response = await postChat(chatBody("talker", sessionId, true), AbortSignal.any([controller.signal, timeout]));
        if (response.status !== 200) return done({ error: `HTTP ${response.status}: ${(await response.text()).slice(0, 300)}` });
        const reader = response.body!.getReader();
        const before = await readContent(reader, true);
        controller.abort();
        // The body's reader now fails with the abort: the client's side of leaving.
        const error = await reader.read().then(() => "read on after abort", (e: unknown) => (e as Error).name);
        return done({ before, error });
      }
      case "openai-break-mid-stream": {
        const params: ChatCompletionCreateParamsStreaming & { session_id?: string } = chatBody("talker", sessionId, true) as never;
        let before = "";
        // Leaving the loop early makes the SDK abort its request: a client that has seen enough.
        for await (const chunk of await client.chat.completions.create(params, { signal: timeout })) {
          before += chunk.choices[0]?.delta?.content ?? "";
          if (before !== "") break;
        }
        return done({ before, error: "break" });
      }
      case "socket-closed-after-request":
      case "socket-closed-mid-body":
        await socketRequest(chatBody("talker", sessionId, true), kind === "socket-closed-after-request");
        return done({ error: "socket closed" });
      case "fetch-abort-at-head": {
        const controller = new AbortController();
        const response = await postChat(chatBody("talker", sessionId, true), AbortSignal.any([controller.signal, timeout]));
        controller.abort();
        return done({ error: `aborted at HTTP ${response.status}` });
      }
    }
  } catch (error) {
    return done({ error: `${(error as Error).name}: ${String((error as Error).message).slice(0, 300)}` });
  }
}

/** What the client side of each leaving kind must see (anything else is an unexpected error). */
function expectedLeave(o: Outcome): boolean {
  switch (o.kind) {
    case "fetch-abort-mid-stream":
      return o.before !== undefined && o.before !== "" && o.error === "AbortError";
    case "openai-break-mid-stream":
      return o.before !== undefined && o.before !== "" && o.error === "break";
    case "fetch-abort-at-head":
      return o.error === "aborted at HTTP 200";
    default:
      return o.error === "socket closed";
  }
}

async function health(): Promise<{ status: number; body: { status: string; in_flight: number } }> {
  const response = await fetch(`${server.baseURL}/health`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: (await response.json()) as { status: string; in_flight: number } };
}

/** Polls the server's state (no event reaches the test from inside it); the deadline only bounds a hang. */
async function pollUntil<T>(read: () => Promise<T> | T, ok: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

const sessionDir = (sessionId: string): string => path.join(server.dir, "data", "sessions", "default_user", sessionId);

describe(`serve-http: ${TOTAL} requests from ${CLIENTS} concurrent clients, with disconnects (built CLI)`, () => {
  it("the requests that stay get the exact answer; the ones that leave leak no turn", { timeout: STRESS ? 1_800_000 : 600_000 }, async (t) => {
    const client = new OpenAI({ baseURL: `${server.baseURL}/v1`, apiKey: "unused", maxRetries: 0, timeout: REQUEST_TIMEOUT_MS });
    const baseline = readProcStats(server.proc.pid!);
    const outcomes: Outcome[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = next++; i < TOTAL; i = next++) outcomes.push(await runOne(i, client));
      }),
    );
    const wallMs = performance.now() - started;
    const peak = readProcStats(server.proc.pid!);

    const staying = outcomes.filter((o) => !LEAVING.has(o.kind));
    const leaving = outcomes.filter((o) => LEAVING.has(o.kind));
    assert.equal(outcomes.length, TOTAL);
    assert.deepEqual(staying.filter((o) => o.error !== undefined || o.text !== DEMO_SENTENCE).slice(0, 5), [], "every request that stayed got the exact sentence");
    assert.deepEqual(leaving.filter((o) => !expectedLeave(o)).slice(0, 5), [], "every request that left saw only its own leaving");

    // No turn left running: in_flight (chat turns and completions the server still runs) drops to 0.
    const settled = performance.now();
    const quiet = await pollUntil(health, (h) => h.body.in_flight === 0, 60_000, "/health in_flight");
    const settleMs = performance.now() - settled;
    assert.equal(quiet.status, 200);
    assert.equal(quiet.body.status, "ok");

    // Recorded as the docs say: a cancelled turn keeps its checkpoint and adds nothing to the
    // history (a talker turn that was not cancelled would have finished its 2,000 tokens there).
    let checkpoints = 0;
    for (const o of leaving) {
      const dir = sessionDir(o.sessionId!);
      assert.equal(existsSync(path.join(dir, "history.jsonl")) && (await readFile(path.join(dir, "history.jsonl"), "utf8")).trim() !== "", false, `${o.kind} ${o.sessionId}: a turn finished`);
      const checkpoint = existsSync(path.join(dir, "checkpoint.json"));
      if (o.kind === "fetch-abort-mid-stream" || o.kind === "openai-break-mid-stream") assert.ok(checkpoint, `${o.kind} ${o.sessionId}: its cancelled turn keeps a checkpoint`);
      if (o.kind === "socket-closed-mid-body") assert.equal(existsSync(dir), false, `${o.sessionId}: a request that never arrived whole started a turn`);
      if (checkpoint) checkpoints += 1;
    }

    // Every such session is free: a new turn runs at once (no 409), and discards the cancelled one.
    const followUps = await Promise.all(
      leaving.map(async (o) => {
        const hadCheckpoint = existsSync(path.join(sessionDir(o.sessionId!), "checkpoint.json"));
        const response = await postChat(chatBody("assistant", o.sessionId, false), AbortSignal.timeout(REQUEST_TIMEOUT_MS));
        const text = await response.text();
        return { o, hadCheckpoint, status: response.status, text };
      }),
    );
    for (const { o, hadCheckpoint, status, text } of followUps) {
      assert.equal(status, 200, `${o.sessionId}: ${text.slice(0, 300)}`);
      const json = JSON.parse(text) as { choices: Array<{ message: { content: string } }>; local_ai: { warnings: string[] } };
      assert.equal(json.choices[0]?.message.content, DEMO_SENTENCE);
      assert.equal(json.local_ai.warnings.some((w) => w.startsWith("discarded the unfinished turn")), hadCheckpoint, `${o.sessionId}: ${JSON.stringify(json.local_ai.warnings)}`);
    }

    // No error but the expected ones: nothing logged at error level or above; the server still healthy.
    const records = stderrLines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { level: number; msg: string });
    assert.deepEqual(records.filter((r) => r.level >= 50).map((r) => r.msg).slice(0, 5), []);
    const cancelLogs = records.filter((r) => /cancel/i.test(r.msg)).length;
    const final = await health();
    assert.deepEqual([final.status, final.body.status, final.body.in_flight], [200, "ok", 0]);

    // Connections closed: the server's fds come back to where they were (idle keep-alive sockets close after 5 s).
    const fds = await pollUntil(() => readProcStats(server.proc.pid!).fds, (n) => n <= baseline.fds + 4, 30_000, `server fds (baseline ${baseline.fds})`);
    const count = (kind: Kind): number => outcomes.filter((o) => o.kind === kind).length;
    t.diagnostic(
      `${TOTAL} requests, ${CLIENTS} clients: ${(wallMs / 1000).toFixed(1)} s wall, slowest ${(Math.max(...outcomes.map((o) => o.ms)) / 1000).toFixed(1)} s; ` +
        `${staying.length} stayed (all exact), ${leaving.length} left (${count("fetch-abort-mid-stream")} fetch abort mid-stream, ${count("openai-break-mid-stream")} openai break mid-stream, ` +
        `${count("socket-closed-after-request")} socket closed after the request, ${count("socket-closed-mid-body")} mid-body, ${count("fetch-abort-at-head")} abort at the response head); ` +
        `${checkpoints} checkpoints kept, ${cancelLogs} cancel log lines, in_flight 0 after ${settleMs.toFixed(0)} ms; ` +
        `server fds ${baseline.fds} -> ${peak.fds} (end of load) -> ${fds}; RSS ${mib(baseline.rssBytes)} -> ${mib(peak.rssBytes)} MiB, peak ${mib(peak.peakRssBytes)} MiB`,
    );
  });
});
