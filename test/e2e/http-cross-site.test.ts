// A web page must not be able to run turns on a local, token-less serve-http: the exact requests a
// browser sends cross-site without a preflight (text/plain, forms, with Origin) and a browser-like
// preflight, against the built CLI on a real socket.
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { agentsYaml, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

let server: HttpServer;

before(async () => {
  server = await startHttpServer(`${agentsYaml(await ensureFixture("demo"))}http:\n  cors_origins: ["http://app.example"]\n`);
});

after(async () => {
  await server.stop();
});

const body = JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "hi" }], session_id: "csrf", approve_execution: true });
const codeOf = async (res: Response): Promise<[number, string]> => [res.status, ((await res.json()) as { error: { code: string } }).error.code];
const sessionFolders = async (): Promise<string[]> => readdir(path.join(server.dir, "data", "sessions", "default_user")).catch(() => []);

describe("serve-http refuses cross-site requests (built CLI)", () => {
  it("a page's no-preflight POSTs (text/plain, form, multipart; with or without Origin) run nothing", async () => {
    const url = `${server.base}/v1/chat/completions`;
    // What `fetch(url, {method: "POST", body: "<json>"})` or an auto-submitted form sends from a page.
    assert.deepEqual(await codeOf(await fetch(url, { method: "POST", headers: { Origin: "http://evil.example", "Content-Type": "text/plain;charset=UTF-8" }, body })), [403, "origin_not_allowed"]);
    assert.deepEqual(await codeOf(await fetch(url, { method: "POST", headers: { Origin: "null", "Content-Type": "application/x-www-form-urlencoded" }, body: `x=${encodeURIComponent(body)}` })), [403, "origin_not_allowed"]);
    // Without an Origin (some privacy modes strip it), the body type alone refuses it.
    assert.deepEqual(await codeOf(await fetch(url, { method: "POST", body })), [415, "unsupported_media_type"]);
    const form = new FormData();
    form.set("payload", body);
    assert.deepEqual(await codeOf(await fetch(url, { method: "POST", body: form })), [415, "unsupported_media_type"]);
    // Even with the JSON type a foreign origin is refused (a page would have needed a preflight).
    assert.deepEqual(await codeOf(await fetch(url, { method: "POST", headers: { Origin: "http://evil.example", "Content-Type": "application/json" }, body })), [403, "origin_not_allowed"]);
    assert.deepEqual(await sessionFolders(), [], "no turn ran: no session folder was created");
  });

  it("a browser-like preflight: refused for a foreign origin, granted for a listed one, whose JSON request then runs", async () => {
    const preflight = (origin: string): Promise<Response> =>
      fetch(`${server.base}/v1/chat/completions`, { method: "OPTIONS", headers: { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" } });
    const foreign = await preflight("http://evil.example");
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get("access-control-allow-origin"), null);
    const listed = await preflight("http://app.example");
    assert.equal(listed.status, 204);
    assert.equal(listed.headers.get("access-control-allow-origin"), "http://app.example");
    assert.match(listed.headers.get("access-control-allow-headers") ?? "", /content-type/i);
    const res = await fetch(`${server.base}/v1/chat/completions`, { method: "POST", headers: { Origin: "http://app.example", "Content-Type": "application/json" }, body });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("access-control-allow-origin"), "http://app.example");
    assert.equal(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content, DEMO_SENTENCE);
    assert.deepEqual(await sessionFolders(), ["csrf"]);
  });
});
