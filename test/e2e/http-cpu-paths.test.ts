import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { LocalAiClient, LocalAiError } from "../../src/client/index.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { tempConfig } from "../helpers/temp-config.js";

/**
 * Every per-request tokenizing path on its largest accepted input (the body limit, set to 4 MiB
 * here) through the built CLI, while a probe asks GET /health (or stdio `ping`) back to back: no
 * probe may wait 1 s (issue 33: one multi-MiB request used to stop the whole server for seconds,
 * a 120 KB with_pieces tokenize for 76 s). Tokenize past llama.max_tokenize_tokens is a 400 that
 * names the limit and the key.
 */

const MAX_BODY = 4 * 1024 * 1024;
const MAX_TOKENIZE = 65_536;
const SENTENCE = "The cat ran to the river, slowly. ";
/** Text that fills a body of MAX_BODY with room for the JSON around it. */
const BIG = SENTENCE.repeat(Math.floor((MAX_BODY - 4096) / SENTENCE.length));

let server: HttpServer;
let configPath = "";

before(async () => {
  const [tiny, ranker] = await Promise.all([ensureFixture("tiny", { seed: 3 }), ensureFixture("rerank")]);
  const config = {
    llama: { max_tokenize_tokens: MAX_TOKENIZE, models: { default: localModel(tiny, { ctx_size: 4096 }), ranker: localModel(ranker, { ctx_size: 512 }) } },
    agents: { assistant: { model: "default" } },
    http: { max_body_bytes: MAX_BODY },
  };
  server = await startHttpServer(configYaml(config));
  configPath = (await tempConfig(configYaml(config))).configPath;
  // Both models loaded first: a probe must not measure a model load.
  for (const model of ["default", "ranker"]) assert.equal((await post("/tokenize", { model, content: "warm" })).status, 200);
});

after(async () => {
  await server?.stop();
});

const post = (path: string, body: unknown): Promise<Response> =>
  fetch(`${server.base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/**
 * Runs `work` while `probe` is called back to back; the slowest probe's time. A probe is always in
 * flight while the work runs, so a work that holds the event loop shows as a slow probe.
 */
async function slowestProbeDuring<T>(work: () => Promise<T>, probe: () => Promise<unknown>): Promise<{ result: T; slowestMs: number; probes: number }> {
  let done = false;
  let slowestMs = 0;
  let probes = 0;
  const probing = (async () => {
    while (!done) {
      const started = performance.now();
      await probe();
      slowestMs = Math.max(slowestMs, performance.now() - started);
      probes++;
    }
  })();
  let result: T;
  try {
    result = await work();
  } finally {
    // The probe in flight when the work ends counts too: it may be the one that waited.
    done = true;
    await probing;
  }
  return { result, slowestMs, probes };
}

async function healthDuring(path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  assert.ok(JSON.stringify(body).length <= MAX_BODY, "the body fits the limit");
  const health = async (): Promise<void> => assert.equal((await fetch(`${server.base}/health`)).status, 200);
  const { result, slowestMs, probes } = await slowestProbeDuring(async () => {
    const response = await post(path, body);
    return { status: response.status, json: (await response.json()) as unknown };
  }, health);
  assert.ok(probes >= 1);
  assert.ok(slowestMs < 1000, `${path}: GET /health waited ${Math.round(slowestMs)} ms`);
  return result;
}

const errorOf = (json: unknown): { code: string; message: string; param: string | null } => (json as { error: { code: string; message: string; param: string | null } }).error;

describe("per-request CPU paths on their largest input: /health keeps answering (issue 33)", () => {
  it("POST /tokenize with_pieces: every piece, joined they are the text", async () => {
    const content = "ab ".repeat(20_000);
    const { status, json } = await healthDuring("/tokenize", { content, with_pieces: true });
    assert.equal(status, 200);
    const tokens = (json as { tokens: Array<{ id: number; piece: string }> }).tokens;
    assert.equal(tokens.length, 40_001); // "▁a", "b" for each word, and the last space
    assert.equal(tokens.map((token) => token.piece).join(""), content);
  });

  it("POST /tokenize past llama.max_tokenize_tokens: 400 naming the limit and the key", async () => {
    const { status, json } = await healthDuring("/tokenize", { content: BIG });
    assert.equal(status, 400);
    const error = errorOf(json);
    assert.equal(error.code, "invalid_request");
    assert.equal(error.param, "content");
    assert.match(error.message, new RegExp(`more than ${MAX_TOKENIZE} tokens.*llama\\.max_tokenize_tokens`));
  });

  it("POST /v1/messages/count_tokens and /v1/responses/input_tokens count a 4 MiB prompt", async () => {
    const counted = await healthDuring("/v1/messages/count_tokens", { model: "assistant", messages: [{ role: "user", content: BIG }] });
    assert.equal(counted.status, 200);
    const count = (counted.json as { input_tokens: number }).input_tokens;
    assert.ok(count > 1_000_000, `counted ${count}`);
    const input = await healthDuring("/v1/responses/input_tokens", { model: "assistant", input: BIG });
    assert.equal(input.status, 200);
    assert.ok((input.json as { input_tokens: number }).input_tokens > 1_000_000);
  });

  it("POST /v1/embeddings and /v1/rerank refuse a 4 MiB input past the context", async () => {
    const embed = await healthDuring("/v1/embeddings", { model: "default", input: BIG });
    assert.equal(embed.status, 400);
    assert.match(errorOf(embed.json).message, /input\[0\] is more than 2047 tokens; model "default" embeds at most 2047/);
    const rerank = await healthDuring("/v1/rerank", { model: "ranker", query: "the cat", documents: ["hello world", BIG] });
    assert.equal(rerank.status, 400);
    assert.equal(errorOf(rerank.json).param, "documents");
    assert.match(errorOf(rerank.json).message, /documents\[1\] is more than 511 tokens/);
  });
});

describe("stdio tokenize on its largest input: ping keeps answering (issue 33)", () => {
  it("a 4 MiB tokenize is refused at llama.max_tokenize_tokens while ping answers within 1 s", async () => {
    const local = new LocalAiClient({ config: configPath, env: { LOCAL_AI_LOG_LEVEL: "warn" } });
    try {
      await local.tokenize({ content: "warm" });
      const { result, slowestMs } = await slowestProbeDuring(
        () => local.tokenize({ content: BIG }).then(() => null, (error: unknown) => error),
        () => local.ping(),
      );
      assert.ok(slowestMs < 1000, `ping waited ${Math.round(slowestMs)} ms`);
      assert.ok(result instanceof LocalAiError);
      assert.equal(result.code, "invalid_request");
      assert.match(result.message, new RegExp(`more than ${MAX_TOKENIZE} tokens.*llama\\.max_tokenize_tokens`));
    } finally {
      await local.close();
    }
  });
});
