import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { afterEach, describe, it } from "node:test";
import { OpenAiEngine } from "../../src/engine/openai/openai-engine.js";
import { modelSchema, type ModelConfig } from "../../src/config/schema.js";
import { isRuntimeError } from "../../src/shared/runtime-error.js";
import { captureLogger } from "../helpers/capture-logger.js";
import {
  chunk,
  closedPort,
  sendData,
  sendJsonError,
  startSse,
  startUpstream,
  usageChunk,
  type ScriptedUpstream,
  type UpstreamHandler,
} from "../helpers/openai-sse-upstream.js";
import { heldResponse } from "../helpers/held-response.js";
import { collect } from "../helpers/collect.js";

const SECRET = "sk-very-secret-key";
let upstream: ScriptedUpstream | undefined;
let engine: OpenAiEngine | undefined;

afterEach(async () => {
  await engine?.close();
  engine = undefined;
  await upstream?.close();
  upstream = undefined;
});

function config(baseUrl: string, overrides: Partial<ModelConfig> = {}): ModelConfig {
  return { ...modelSchema.parse({ engine: "openai", base_url: baseUrl }), ...overrides };
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const MODELS = { object: "list", data: [{ id: "remote-model", object: "model", created: 0, owned_by: "test" }] };

/** /v1/models answers the list; chat completions stream "hello". */
const healthyServer: UpstreamHandler = (req, res) => {
  if (req.url === "/v1/models") return json(res, MODELS);
  startSse(res);
  sendData(res, chunk({ content: "hello" }));
  sendData(res, chunk({}, "stop"));
  sendData(res, usageChunk(3, 1));
  sendData(res, "[DONE]");
  res.end();
};

const isCode = (code: string) => (err: unknown) => isRuntimeError(err) && err.code === code;

describe("OpenAiEngine", () => {
  it("warm-up checks GET /models with the key, then health is ready; repeated warm-ups do not call again", async () => {
    upstream = await startUpstream(healthyServer);
    const { logger } = captureLogger();
    engine = new OpenAiEngine("chat", config(upstream.baseUrl, { api_key: SECRET, model: "remote-model" }), { logger });
    assert.equal(engine.kind, "openai");
    assert.equal(engine.modelName, "chat");
    assert.equal(engine.health().state, "stopped");
    const phases: string[] = [];
    await engine.warmUp({ onProgress: (p) => phases.push(p.phase) });
    await engine.warmUp();
    assert.deepEqual(phases, ["checking"]);
    assert.equal(upstream.requests.length, 1);
    assert.equal(upstream.requests[0]!.method, "GET");
    assert.equal(upstream.requests[0]!.url, "/v1/models");
    assert.equal(upstream.requests[0]!.headers.authorization, `Bearer ${SECRET}`);
    assert.deepEqual(engine.health(), {
      state: "ready",
      degradationTier: "NORMAL",
      info: { base_url: upstream.baseUrl, model: "remote-model", active_requests: 0 },
    });
  });

  it("concurrent warm-ups share one check", async () => {
    const held = heldResponse();
    upstream = await startUpstream((_req, res) => held.hold(() => json(res, MODELS)));
    engine = new OpenAiEngine("chat", config(upstream.baseUrl), { logger: captureLogger().logger });
    const all = Promise.all([engine.warmUp(), engine.warmUp(), engine.warmUp()]);
    const release = await held.arrived;
    assert.equal(engine.health().state, "starting");
    release();
    await all;
    assert.equal(upstream.requests.length, 1);
    assert.equal(engine.health().state, "ready");
  });

  it("401 on warm-up -> engine_auth and health down; a retry after the fix succeeds", async () => {
    let reject = true;
    upstream = await startUpstream((req, res) => (reject ? sendJsonError(res, 401, "bad key") : healthyServer(req, res, undefined)));
    engine = new OpenAiEngine("chat", config(upstream.baseUrl), { logger: captureLogger().logger });
    await assert.rejects(engine.warmUp(), isCode("engine_auth"));
    const health = engine.health();
    assert.equal(health.state, "down");
    assert.match(health.detail ?? "", /bad key/);
    reject = false;
    await engine.warmUp();
    assert.equal(engine.health().state, "ready");
    assert.equal(upstream.requests.length, 2);
  });

  it("unreachable on warm-up -> engine_unavailable naming the base URL", async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
    engine = new OpenAiEngine("chat", config(baseUrl), { logger: captureLogger().logger });
    await assert.rejects(engine.warmUp(), (err: unknown) => isCode("engine_unavailable")(err) && (err as Error).message.includes(baseUrl));
    assert.equal(engine.health().state, "down");
  });

  it("a /models that never answers is bounded by the probe timeout -> engine_unavailable", async () => {
    upstream = await startUpstream(() => undefined);
    engine = new OpenAiEngine("chat", config(upstream.baseUrl), { logger: captureLogger().logger, probeTimeoutMs: 200 });
    const started = Date.now();
    await assert.rejects(engine.warmUp(), isCode("engine_unavailable"));
    assert.ok(Date.now() - started < 2000);
  });

  it("a server without /models (404) is accepted with a warning", async () => {
    upstream = await startUpstream((_req, res) => sendJsonError(res, 404, "not found"));
    const captured = captureLogger();
    engine = new OpenAiEngine("chat", config(upstream.baseUrl), { logger: captured.logger });
    await engine.warmUp();
    assert.equal(engine.health().state, "ready");
    assert.ok(captured.records().some((r) => r["level"] === 40 && /no \/models endpoint/.test(String(r["msg"]))));
  });

  it("warm-up abort: rejects cancelled at once, closes the check, and can be retried", async () => {
    let hang = true;
    const held = heldResponse();
    upstream = await startUpstream((req, res) => (hang ? held.hold(() => undefined) : healthyServer(req, res, undefined)));
    engine = new OpenAiEngine("chat", config(upstream.baseUrl), { logger: captureLogger().logger });
    const controller = new AbortController();
    const pending = engine.warmUp({ signal: controller.signal });
    await held.arrived;
    controller.abort();
    await assert.rejects(pending, isCode("cancelled"));
    assert.equal((await upstream.requests[0]!.closed).finished, false, "the abandoned check was closed");
    assert.equal(engine.health().state, "stopped");
    hang = false;
    await engine.warmUp();
    assert.equal(engine.health().state, "ready");
  });

  it("one caller aborting does not cancel the warm-up another caller still waits for", async () => {
    const held = heldResponse();
    upstream = await startUpstream((_req, res) => held.hold(() => json(res, MODELS)));
    engine = new OpenAiEngine("chat", config(upstream.baseUrl), { logger: captureLogger().logger });
    const controller = new AbortController();
    const first = engine.warmUp({ signal: controller.signal });
    const second = engine.warmUp();
    const release = await held.arrived;
    controller.abort();
    await assert.rejects(first, isCode("cancelled"));
    release();
    await second;
    assert.equal(engine.health().state, "ready");
  });

  it("generate sends config.model (or the config name) and never logs the key", async () => {
    upstream = await startUpstream(healthyServer);
    const captured = captureLogger("trace");
    engine = new OpenAiEngine("chat", config(upstream.baseUrl, { api_key: SECRET }), { logger: captured.logger });
    const chunks = await collect(engine.generate({ messages: [{ role: "user", content: "hi" }], temperature: 0, maxTokens: 8 }));
    assert.deepEqual(chunks, [
      { type: "text", delta: "hello" },
      { type: "usage", inputTokens: 3, outputTokens: 1 },
      { type: "end", finishReason: "stop" },
    ]);
    assert.equal((upstream.requests[0]!.body as { model: string }).model, "chat");
    assert.equal(engine.health().state, "ready");
    assert.ok(!JSON.stringify(captured.records()).includes(SECRET));
    assert.ok(!JSON.stringify(engine.health()).includes(SECRET));
  });

  it("sends 'not-needed' when no api_key is configured", async () => {
    upstream = await startUpstream(healthyServer);
    engine = new OpenAiEngine("chat", config(upstream.baseUrl), { logger: captureLogger().logger });
    await engine.warmUp();
    assert.equal(upstream.requests[0]!.headers.authorization, "Bearer not-needed");
  });

  it("uses the injected fetch", async () => {
    upstream = await startUpstream(healthyServer);
    const urls: string[] = [];
    const spy: typeof fetch = (input, init) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return fetch(input, init);
    };
    engine = new OpenAiEngine("chat", config(upstream.baseUrl), { logger: captureLogger().logger, fetch: spy });
    await engine.warmUp();
    assert.deepEqual(urls, [`${upstream.baseUrl}/models`]);
  });

  it("a generate that cannot reach the server marks health down", async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
    engine = new OpenAiEngine("chat", config(baseUrl), { logger: captureLogger().logger });
    await assert.rejects(collect(engine.generate({ messages: [], temperature: 0, maxTokens: 8 })), isCode("engine_unavailable"));
    assert.equal(engine.health().state, "down");
  });

  it("close() aborts in-flight generations and refuses new work", async () => {
    upstream = await startUpstream((_req, res) => {
      startSse(res);
      sendData(res, chunk({ content: "first" }));
    });
    engine = new OpenAiEngine("chat", config(upstream.baseUrl), { logger: captureLogger().logger });
    const iterator = engine.generate({ messages: [], temperature: 0, maxTokens: 8 })[Symbol.asyncIterator]();
    assert.deepEqual(await iterator.next(), { done: false, value: { type: "text", delta: "first" } });
    assert.equal(engine.health().info?.["active_requests"], 1);
    const pending = iterator.next();
    await engine.close();
    await assert.rejects(pending, isCode("cancelled"));
    assert.equal((await upstream.requests[0]!.closed).finished, false);
    assert.equal(engine.health().state, "stopped");
    await assert.rejects(engine.warmUp(), isCode("engine_unavailable"));
    await assert.rejects(collect(engine.generate({ messages: [], temperature: 0, maxTokens: 8 })), isCode("engine_unavailable"));
  });

  it("refuses a config without base_url", () => {
    assert.throws(
      () => new OpenAiEngine("chat", modelSchema.parse({ engine: "openai" }), { logger: captureLogger().logger }),
      isCode("config_invalid"),
    );
  });
});
