// serve-http's Host check (DNS rebinding) and body limits over a bare socket against the built
// CLI: what a browser after a rebinding sends, what forwards send, and bodies that are too large,
// never end, or lie about their length. Nothing refused may start a turn or log an error.
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { demoAndTinyYaml, startHttpServer, type HttpServer } from "../helpers/http-server.js";
import { flood, rawExchange, type RawResponse } from "../helpers/raw-http.js";
import { waitUntil } from "../helpers/wait-until.js";
import { collectLines } from "../helpers/collect-lines.js";

const MAX_BODY = 64 * 1024;
const MiB = 1024 * 1024;

let server: HttpServer;
const stderrLines: string[] = [];

before(async () => {
  const demoPath = await ensureFixture("demo");
  const yaml = `${demoAndTinyYaml({ demoPath })}http:\n  max_body_bytes: ${MAX_BODY}\n  allowed_hosts: ["my.box"]\n`;
  server = await startHttpServer({ yaml, env: { LOCAL_AI_LOG_LEVEL: "info" } });
  collectLines(server.proc.stderr, stderrLines);
});

after(async () => {
  // No refusal below may log at error level or above, nor leave a session behind.
  const errors = stderrLines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { level: number; msg: string }).filter((r) => r.level >= 50);
  await server?.stop();
  assert.deepEqual(errors.map((r) => r.msg), []);
});

const sessions = (): Promise<string[]> => readdir(path.join(server.dir, "data", "sessions", "default_user")).catch(() => []);
const chat = (sessionId: string, pad = ""): string => JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "Hello" }], session_id: sessionId, ...(pad === "" ? {} : { pad }) });
const post = (host: string | null, body: string, extra = ""): string =>
  `POST /v1/chat/completions HTTP/1.1\r\n${host === null ? "" : `Host: ${host}\r\n`}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${extra}\r\n${body}`;
const get = (host: string | null, version = "1.1"): string => `GET /health HTTP/${version}\r\n${host === null ? "" : `Host: ${host}\r\n`}Connection: close\r\n\r\n`;
const one = async (request: string | Buffer): Promise<RawResponse> => {
  const { responses, data } = await rawExchange(server.port, request);
  assert.equal(responses.length, 1, data.slice(0, 500));
  return responses[0]!;
};
/** The error body without its request id, which must be the response's X-Request-Id. */
const errorOf = (response: RawResponse): unknown => {
  const body = JSON.parse(response.body) as { error: Record<string, unknown> };
  assert.match(response.headers["x-request-id"] ?? "", /^req_[0-9a-f]{24}$/);
  assert.equal(body.error.request_id, response.headers["x-request-id"]);
  delete body.error.request_id;
  return body;
};
const tooLarge = { error: { message: `The request body is larger than http.max_body_bytes (${MAX_BODY} bytes)`, type: "invalid_request_error", param: null, code: "payload_too_large" } };

describe("serve-http Host check over a socket (built CLI)", () => {
  it("serves loopback names, IP literals and allowed_hosts on any port, refuses other names with 403", async () => {
    const port = server.port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "localhost", "LOCALHOST:9000", `my.box:${port}`, "127.0.0.1:9999", `192.168.7.7:${port}`, "[fe80::1]"]) {
      assert.equal((await one(get(host))).status, 200, host);
    }
    for (const host of ["evil.example", `evil.example:${port}`, `localhost.evil.example:${port}`, "127.0.0.1.nip.io", `my.box.evil.example:${port}`]) {
      const response = await one(get(host));
      assert.equal(response.status, 403, host);
      assert.deepEqual(errorOf(response), { error: { message: `Host ${JSON.stringify(host)} is not allowed (add it to http.allowed_hosts)`, type: "invalid_request_error", param: null, code: "host_not_allowed" } });
    }
    // A rebound page's POST runs nothing, even a valid one.
    assert.equal((await one(post(`evil.example:${port}`, chat("rebound")))).status, 403);
    assert.deepEqual(await sessions(), []);
  });

  it("no Host: HTTP/1.0 is served (never a browser), HTTP/1.1 is refused by Node with 400", async () => {
    assert.equal((await one(get(null, "1.0"))).status, 200);
    assert.equal((await one(get(null, "1.1"))).status, 400);
  });
});

describe("serve-http body limits over a socket (built CLI)", () => {
  it("a body of exactly max_body_bytes runs; one byte more is 413 before any turn", async () => {
    const base = chat("exact", " ");
    const exact = chat("exact", " ".repeat(MAX_BODY - Buffer.byteLength(base) + 1));
    assert.equal(Buffer.byteLength(exact), MAX_BODY);
    const ok = await one(post(`127.0.0.1:${server.port}`, exact));
    assert.equal(ok.status, 200, ok.body.slice(0, 300));
    assert.equal((JSON.parse(ok.body) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, DEMO_SENTENCE);
    const over = await one(post(`127.0.0.1:${server.port}`, chat("over1", " ".repeat(MAX_BODY - Buffer.byteLength(base) + 2))));
    assert.equal(over.status, 413);
    assert.deepEqual(errorOf(over), tooLarge);
    assert.deepEqual(await sessions(), ["exact"]);
  });

  // The declared length alone gets the 413; what follows is read and dropped only up to a bound
  // (@hono/node-server drains at most 64 MiB or 500 ms), then the connection is closed.
  const limitBytes = 512 * MiB;
  it(`a Content-Length of 10 GiB with a body that keeps coming: 413 at once, the connection closed long before ${limitBytes / MiB} MiB`, { timeout: 120_000 }, async (t) => {
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * MiB}\r\n\r\n`;
    const result = await flood(server.port, head, Buffer.alloc(64 * 1024, 0x20), limitBytes);
    t.diagnostic(`declared 10 GiB: closed after ${(result.bodyBytesSent / MiB).toFixed(1)} MiB sent`);
    assert.equal(result.closedByServer, true, `the server read on past ${limitBytes / MiB} MiB`);
    assert.deepEqual(result.responses.map((r) => [r.status, errorOf(r)]), [[413, tooLarge]]);
    assert.ok(result.bodyBytesSent < 128 * MiB, `${result.bodyBytesSent} bytes went in before the close`);
  });

  it(`a chunked body without a length that never ends: 413 once past the limit, the connection closed long before ${limitBytes / MiB} MiB`, { timeout: 120_000 }, async (t) => {
    const head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    const data = Buffer.alloc(64 * 1024, 0x20);
    const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]);
    const result = await flood(server.port, head, chunk, limitBytes);
    t.diagnostic(`chunked, no length: closed after ${(result.bodyBytesSent / MiB).toFixed(1)} MiB sent`);
    assert.equal(result.closedByServer, true, `the server read on past ${limitBytes / MiB} MiB`);
    assert.deepEqual(result.responses.map((r) => [r.status, errorOf(r)]), [[413, tooLarge]]);
    assert.ok(result.bodyBytesSent < 128 * MiB, `${result.bodyBytesSent} bytes went in before the close`);
  });

  it("a Content-Length shorter than the body: the body is cut there and the rest is no request: one 400, the connection closed, no turn", async () => {
    const request = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n${chat("short-cl")}`;
    const { responses } = await rawExchange(server.port, request);
    // The app refuses the 20 bytes as invalid_json, but Node's parser fails on what follows them in
    // the same packet first and answers its own 400 (then closes), so that is what arrives.
    assert.deepEqual(responses.map((r) => r.status), [400]);
    assert.deepEqual(await sessions(), ["exact"]);
  });

  it("a Content-Length longer than the body, then the client closes its side: a 400, no turn, logged as a cancelled request", async () => {
    const body = chat("long-cl");
    const request = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body) + 100}\r\n\r\n${body}`;
    const { responses } = await rawExchange(server.port, request, { halfClose: true });
    assert.deepEqual(responses.map((r) => r.status), [400]);
    // Node answers the broken request itself; the app sees its body fail with the client gone: not a server error.
    const cancelled = (): boolean => stderrLines.some((line) => line.includes('"msg":"request cancelled"') && line.includes("before its request body arrived"));
    await waitUntil(cancelled, [{ emitter: server.proc.stderr, event: "data" }], 10_000, () => stderrLines.slice(-5).join("\n"));
    assert.deepEqual(await sessions(), ["exact"]);
  });

  it("request smuggling shapes (Content-Length with Transfer-Encoding, two Content-Lengths) are 400 from Node; a header block over 16 KiB is 431", async () => {
    const body = chat("smuggle");
    const both = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nTransfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    assert.equal((await one(both)).status, 400);
    const twice = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Length: 5\r\n\r\n${body}`;
    assert.equal((await one(twice)).status, 400);
    assert.equal((await one(post("127.0.0.1", chat("headers"), `X-Pad: ${"a".repeat(20_000)}\r\n`))).status, 431);
    assert.deepEqual(await sessions(), ["exact"]);
    assert.equal((await one(get("127.0.0.1"))).status, 200);
  });
});
