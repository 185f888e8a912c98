import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { assembleStandardStream, demoAndTinyYaml, startHttpServer, type HttpServer } from "../helpers/http-server.js";

/**
 * serve-http under load: 200 requests from 20 concurrent clients (fetch and openai v6, stream and
 * not), every one answered with the exact demo sentence; and a client that opens a long stream and
 * never reads it must not hold up anyone else.
 */

let server: HttpServer;

before(async () => {
  const [demoPath, tinyPath] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
  server = await startHttpServer({ yaml: demoAndTinyYaml({ demoPath, tinyPath, talkerMaxTokens: 3000 }) });
});

after(async () => {
  await server?.stop();
});

type Kind = "fetch" | "fetch-stream" | "openai" | "openai-stream";
const KINDS: readonly Kind[] = ["fetch", "fetch-stream", "openai", "openai-stream"];

async function viaFetch(baseURL: string, sessionId: string, stream: boolean, signal: AbortSignal): Promise<string> {
  const response = await fetch(`${baseURL}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "Hello" }], session_id: sessionId, stream }),
    signal,
  });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${body.slice(0, 500)}`);
  if (stream) {
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    const { content, finishReasons } = assembleStandardStream(body);
    assert.deepEqual(finishReasons, ["stop"]);
    return content;
  }
  const json = JSON.parse(body) as { choices: Array<{ message: { content: string } }>; local_ai?: { session_id?: string } };
  assert.equal(json.local_ai?.session_id, sessionId);
  return json.choices[0]?.message.content ?? "";
}

async function viaOpenAI(client: OpenAI, sessionId: string, stream: boolean, signal: AbortSignal): Promise<string> {
  if (!stream) {
    const params: ChatCompletionCreateParamsNonStreaming & { session_id: string } = { model: "assistant", messages: [{ role: "user", content: "Hello" }], session_id: sessionId };
    const completion = await client.chat.completions.create(params, { signal });
    return completion.choices[0]?.message.content ?? "";
  }
  const params: ChatCompletionCreateParamsStreaming & { session_id: string } = { model: "assistant", messages: [{ role: "user", content: "Hello" }], session_id: sessionId, stream: true };
  let text = "";
  for await (const chunk of await client.chat.completions.create(params, { signal })) text += chunk.choices[0]?.delta?.content ?? "";
  return text;
}

/** Runs `total` requests with `concurrency` workers; returns what each got (or its error). */
async function runLoad(total: number, concurrency: number, prefix: string, timeoutMs: number): Promise<{ results: Array<{ kind: Kind; text?: string; error?: string; ms: number }>; wallMs: number }> {
  const client = new OpenAI({ baseURL: `${server.baseURL}/v1`, apiKey: "unused", maxRetries: 0, timeout: timeoutMs });
  const results: Array<{ kind: Kind; text?: string; error?: string; ms: number }> = [];
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    for (let i = next++; i < total; i = next++) {
      const kind = KINDS[i % KINDS.length]!;
      const sessionId = `${prefix}${i}`;
      const signal = AbortSignal.timeout(timeoutMs);
      const t0 = performance.now();
      try {
        const text = kind.startsWith("fetch")
          ? await viaFetch(server.baseURL, sessionId, kind === "fetch-stream", signal)
          : await viaOpenAI(client, sessionId, kind === "openai-stream", signal);
        results.push({ kind, text, ms: performance.now() - t0 });
      } catch (error) {
        results.push({ kind, error: String(error), ms: performance.now() - t0 });
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { results, wallMs: performance.now() - started };
}

/** Status of a non-stream turn on `sessionId` (409 while another turn holds it). */
async function probeSession(sessionId: string): Promise<number> {
  const response = await fetch(`${server.baseURL}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "Hello" }], session_id: sessionId }),
    signal: AbortSignal.timeout(30_000),
  });
  await response.arrayBuffer();
  return response.status;
}

function rawStreamingRequest(port: number, body: unknown): Socket {
  const payload = JSON.stringify(body);
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nAccept: text/event-stream\r\n\r\n${payload}`,
  );
  return socket;
}

describe("serve-http under load (built CLI, demo and tiny models)", () => {
  it("200 requests from 20 concurrent clients: 200 exact answers, nothing lost", { timeout: 240_000 }, async (t) => {
    const { results, wallMs } = await runLoad(200, 20, "load", 120_000);
    t.diagnostic(`200 requests, 20 clients: ${wallMs.toFixed(0)} ms wall, slowest ${Math.max(...results.map((r) => r.ms)).toFixed(0)} ms`);
    const failures = results.filter((r) => r.error !== undefined || r.text !== DEMO_SENTENCE);
    assert.equal(results.length, 200);
    assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of 200 failed or differed`);
    for (const kind of KINDS) assert.equal(results.filter((r) => r.kind === kind && r.text === DEMO_SENTENCE).length, 50, kind);
    // Bounded in time: generous for a loaded 2-core machine, far below the per-request timeout.
    assert.ok(wallMs < 180_000, `200 requests took ${wallMs.toFixed(0)} ms`);
    const health = await fetch(`${server.baseURL}/health`);
    assert.equal(health.status, 200);
  });

  it("a client that never reads a long stream does not hold up the others", { timeout: 120_000 }, async (t) => {
    const slow = rawStreamingRequest(server.port, {
      model: "talker",
      messages: [{ role: "user", content: "Tell me everything" }],
      stream: true,
      max_tokens: 3000,
      session_id: "slow-reader",
    });
    try {
      // Read only until the response head arrives (the run has started), then never read again.
      const head = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no response head from the slow request in 30 s")), 30_000);
        slow.once("data", (chunk: Buffer) => {
          clearTimeout(timer);
          slow.pause();
          resolve(chunk.toString("utf8"));
        });
      });
      assert.match(head, /^HTTP\/1\.1 200/);
      assert.match(head, /text\/event-stream/i);
      // Pacing, not a synchronization: the stream piles up in the socket buffers meanwhile; the
      // probe below holds whatever the amount.
      await sleep(200);
      // The slow turn is still in flight: its session refuses a second turn.
      assert.equal(await probeSession("slow-reader"), 409, "the slow reader's turn is running");

      const t0 = performance.now();
      const { results } = await runLoad(10, 10, "beside-slow", 20_000);
      const elapsed = performance.now() - t0;
      const after = await probeSession("slow-reader");
      t.diagnostic(`10 requests beside the slow reader: ${elapsed.toFixed(0)} ms; slow turn afterwards: ${after === 409 ? "still running" : `finished (probe ${after})`}`);
      assert.deepEqual(results.filter((r) => r.text !== DEMO_SENTENCE), [], "every request beside the slow reader got the sentence");
      assert.ok(elapsed < 20_000, `10 requests beside a slow reader took ${elapsed.toFixed(0)} ms`);
      assert.equal((await fetch(`${server.baseURL}/health`, { signal: AbortSignal.timeout(5000) })).status, 200);
    } finally {
      slow.destroy();
    }

    // The dropped connection ends its run: the session is free again soon (no 409 forever).
    const deadline = Date.now() + 15_000;
    let status = 0;
    let body = "";
    while (Date.now() < deadline) {
      const response = await fetch(`${server.baseURL}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "Hello" }], session_id: "slow-reader" }),
        signal: AbortSignal.timeout(30_000),
      });
      status = response.status;
      body = await response.text();
      if (status !== 409) break;
      // Paces a bounded retry: the session is free only once the server noticed the reader left.
      await sleep(200);
    }
    assert.equal(status, 200, body.slice(0, 500));
    assert.equal((JSON.parse(body) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, DEMO_SENTENCE);
  });
});
