import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel, type Token } from "node-llama-cpp";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";
import { freePort, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { sendJson, startUpstream, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";

/**
 * POST /v1/rerank, /rerank, /tokenize and /detokenize through the built CLI: the embedded engine
 * on the generated reranker GGUF (qwen3 architecture, rank pooling, a two-label classification
 * head: real llama.cpp rank pooling), a real llama-server launched with --reranking on the same
 * file, an `openai` model passed through to a scripted upstream, and a chat GGUF that cannot
 * rerank. Tokenize round trips are compared with node-llama-cpp's own tokenizer on the GGUF.
 */

const llamaServer = findLlamaServerBinary();
if (llamaServer === null) process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
const skipServer = llamaServer === null ? "llama-server not built: npm run build:llama-server" : false;

const FULL = "full-rights-token-0123456789";
const RANKER_ONLY = "ranker-only-token-0123456789";
const QUERY = "the cat and the dog";
const DOCUMENTS = ["the cat and the dog", "red stone river", "hello world", "a tiny model of the sun", "the cat"];
const TEXTS = ["hello world", "The cat ran to the river, slowly.", "<s> a tiny model </s>", "ünïcode ✓ 12345"];

let server: HttpServer;
let upstream: ScriptedUpstream;
let llama: Llama;
let tinyModel: LlamaModel;
let rerankPath = "";

before(async () => {
  upstream = await startUpstream((req, res, body) => {
    if (req.url !== "/v1/rerank") return sendJson(res, 404, { error: { message: "no route" } });
    const documents = (body as { documents: string[] }).documents;
    // Scripted: a score per document that favours the later ones, shuffled out of order on the wire.
    const results = documents.map((_, index) => ({ index, relevance_score: (index + 1) / 10 })).reverse();
    sendJson(res, 200, { model: "upstream-ranker", object: "list", usage: { prompt_tokens: 11, total_tokens: 11 }, results });
  });
  const [tiny, ranker, rankPort, chatPort] = await Promise.all([ensureFixture("tiny", { seed: 3 }), ensureFixture("rerank"), freePort(), freePort()]);
  rerankPath = ranker;
  const yaml = configYaml({
    llama: {
      ...(llamaServer === null ? {} : { binary: llamaServer }),
      models: {
        default: localModel(tiny),
        ranker: localModel(ranker, { ctx_size: 512 }),
        remote: openaiModel(upstream.baseUrl, "upstream-ranker"),
        served_chat: { engine: "llama-server", path: tiny, port: chatPort },
        ...(llamaServer === null ? {} : { served_ranker: localModel(ranker, { engine: "llama-server", port: rankPort, ctx_size: 512, parallel: 1, rerank: true }) }),
      },
    },
    agents: { assistant: { model: "default" } },
    http: {
      keys: [
        { name: "all", token: FULL },
        { name: "ranker", token: RANKER_ONLY, models: ["ranker"], endpoints: ["/v1/rerank", "/tokenize"] },
      ],
    },
  });
  server = await startHttpServer(yaml);
  llama = await getLlama({ build: "never", gpu: false, logLevel: LlamaLogLevel.warn });
  tinyModel = await llama.loadModel({ modelPath: tiny, gpuLayers: 0 });
});

after(async () => {
  await server?.stop();
  await upstream?.close();
  await tinyModel?.dispose();
});

interface RerankAnswer {
  model: string;
  object: string;
  usage: { prompt_tokens: number; total_tokens: number };
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
}

async function post(path: string, body: unknown, token: string | null = FULL): Promise<{ status: number; json: unknown }> {
  const headers: Record<string, string> = { "Content-Type": "application/json", ...(token === null ? {} : { Authorization: `Bearer ${token}` }) };
  const response = await fetch(`${server.base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

async function rerank(body: Record<string, unknown>, path = "/v1/rerank"): Promise<RerankAnswer> {
  const { status, json } = await post(path, body);
  assert.equal(status, 200, JSON.stringify(json));
  return json as RerankAnswer;
}

/** Scores each document alone: the engine's own verdict, one document at a time. */
async function singleScores(model: string): Promise<number[]> {
  const scores: number[] = [];
  for (const document of DOCUMENTS) scores.push((await rerank({ model, query: QUERY, documents: [document] })).results[0]?.relevance_score ?? Number.NaN);
  return scores;
}

function assertRanked(answer: RerankAnswer, singles: readonly number[], model: string): void {
  assert.equal(answer.model, model);
  assert.equal(answer.object, "list");
  assert.equal(answer.results.length, DOCUMENTS.length);
  const scores = answer.results.map((result) => result.relevance_score);
  for (const score of scores) assert.ok(Number.isFinite(score) && score > 0 && score < 1, `score ${score} is a probability`);
  assert.equal(new Set(scores).size, scores.length, `distinct scores: ${scores.join(", ")}`);
  // Best first, and the order is the one each document gets scored alone.
  const expectedOrder = singles.map((score, index) => ({ score, index })).sort((a, b) => b.score - a.score).map((entry) => entry.index);
  assert.deepEqual(answer.results.map((result) => result.index), expectedOrder);
  answer.results.forEach((result) => assert.ok(Math.abs(result.relevance_score - (singles[result.index] as number)) < 1e-4, `documents[${result.index}] scores as when alone`));
  assert.ok(answer.usage.prompt_tokens > 0);
  assert.equal(answer.usage.total_tokens, answer.usage.prompt_tokens);
}

describe("POST /v1/rerank (built CLI)", () => {
  it("embedded reranker GGUF: every document scored, best first, as each scores alone; top_n and return_documents", async () => {
    const singles = await singleScores("ranker");
    const all = await rerank({ model: "ranker", query: QUERY, documents: DOCUMENTS });
    assertRanked(all, singles, "ranker");
    assert.ok(all.results.every((result) => !("document" in result)), "no documents unless asked for");
    // The same request again: the same scores (deterministic weights, no state kept between calls).
    assert.deepEqual((await rerank({ model: "ranker", query: QUERY, documents: DOCUMENTS })).results, all.results);

    // A document given twice scores twice the same; on the tie the earlier one comes first.
    const twice = await rerank({ model: "ranker", query: QUERY, documents: [...DOCUMENTS, DOCUMENTS[1]] });
    const positions = twice.results.map((result) => result.index);
    assert.equal(twice.results[positions.indexOf(5)]?.relevance_score, twice.results[positions.indexOf(1)]?.relevance_score);
    assert.equal(positions.indexOf(5), positions.indexOf(1) + 1);

    const top = await rerank({ model: "ranker", query: QUERY, documents: DOCUMENTS, top_n: 2, return_documents: true }, "/rerank");
    assert.deepEqual(
      top.results,
      all.results.slice(0, 2).map((result) => ({ ...result, document: { text: DOCUMENTS[result.index] } })),
    );
  });

  it("a model that cannot rerank is a 400 that says so (embedded chat GGUF; llama-server without rerank: true)", async () => {
    const chat = await post("/v1/rerank", { model: "default", query: QUERY, documents: DOCUMENTS });
    assert.equal(chat.status, 400);
    const error = (chat.json as { error: { code: string; param: string; message: string; type: string } }).error;
    assert.equal(error.type, "invalid_request_error");
    assert.equal(error.code, "rerank_not_supported");
    assert.equal(error.param, "model");
    assert.match(error.message, /cannot rerank/);
    const served = await post("/rerank", { model: "served_chat", query: QUERY, documents: DOCUMENTS });
    assert.equal(served.status, 400);
    assert.equal((served.json as { error: { code: string } }).error.code, "rerank_not_supported");
  });

  it("invalid bodies are 400 with the field named", async () => {
    const noDocs = await post("/v1/rerank", { model: "ranker", query: QUERY, documents: [] });
    assert.equal(noDocs.status, 400);
    assert.equal((noDocs.json as { error: { param: string } }).error.param, "documents");
    const noQuery = await post("/v1/rerank", { model: "ranker", documents: DOCUMENTS });
    assert.equal(noQuery.status, 400);
    assert.equal((noQuery.json as { error: { param: string } }).error.param, "query");
  });

  it("openai upstream: passed through to <base_url>/rerank, its scores sorted here, top_n applied here", async () => {
    const answer = await rerank({ model: "remote", query: QUERY, documents: ["a", "b", "c"], top_n: 2, return_documents: true });
    assert.deepEqual(answer, {
      model: "remote",
      object: "list",
      usage: { prompt_tokens: 11, total_tokens: 11 },
      results: [
        { index: 2, relevance_score: 0.3, document: { text: "c" } },
        { index: 1, relevance_score: 0.2, document: { text: "b" } },
      ],
    });
    const sent = upstream.requests.find((request) => request.url === "/v1/rerank");
    assert.deepEqual(sent?.body, { model: "upstream-ranker", query: QUERY, documents: ["a", "b", "c"], top_n: 3 });
  });

  it("llama-server with rerank: true (launched with --reranking): its own /v1/rerank on the reranker GGUF", { skip: skipServer }, async () => {
    const singles = await singleScores("served_ranker");
    assertRanked(await rerank({ model: "served_ranker", query: QUERY, documents: DOCUMENTS }), singles, "served_ranker");
    const top = await rerank({ model: "served_ranker", query: QUERY, documents: DOCUMENTS, top_n: 1, return_documents: true });
    assert.equal(top.results.length, 1);
    assert.equal(top.results[0]?.document?.text, DOCUMENTS[top.results[0]?.index ?? -1]);
  });
});

describe("API keys on the new endpoints (/rerank, /tokenize, /detokenize sit outside /v1 and are guarded the same)", () => {
  it("no key: 401 on every one of them", async () => {
    for (const [path, body] of [["/v1/rerank", { model: "ranker", query: QUERY, documents: DOCUMENTS }], ["/rerank", { model: "ranker", query: QUERY, documents: DOCUMENTS }], ["/tokenize", { content: "x" }], ["/detokenize", { tokens: [1] }]] as const) {
      const answer = await post(path, body, null);
      assert.equal(answer.status, 401, path);
      assert.equal((answer.json as { error: { type: string } }).error.type, "authentication_error", path);
    }
  });

  it("a key scoped to one model and two endpoints: allowed there, 403 naming the model or the endpoint elsewhere", async () => {
    assert.equal((await post("/v1/rerank", { model: "ranker", query: QUERY, documents: DOCUMENTS }, RANKER_ONLY)).status, 200);
    assert.equal((await post("/tokenize", { model: "ranker", content: "hello" }, RANKER_ONLY)).status, 200);
    const refusals = [
      { path: "/v1/rerank", body: { model: "default", query: QUERY, documents: DOCUMENTS }, names: /default/ },
      { path: "/tokenize", body: { model: "default", content: "hello" }, names: /default/ },
      { path: "/rerank", body: { model: "ranker", query: QUERY, documents: DOCUMENTS }, names: /\/rerank/ },
      { path: "/detokenize", body: { model: "ranker", tokens: [1] }, names: /\/detokenize/ },
    ];
    for (const { path, body, names } of refusals) {
      const answer = await post(path, body, RANKER_ONLY);
      assert.equal(answer.status, 403, path);
      const error = (answer.json as { error: { type: string; message: string } }).error;
      assert.equal(error.type, "permission_error", path);
      assert.match(error.message, names, path);
    }
  });
});

describe("POST /tokenize and /detokenize (built CLI)", () => {
  it("embedded: the tokens node-llama-cpp's own tokenizer gives, and back to the same text", async () => {
    for (const content of TEXTS) {
      const { status, json } = await post("/tokenize", { model: "default", content });
      assert.equal(status, 200, JSON.stringify(json));
      const tokens = (json as { tokens: number[] }).tokens;
      assert.deepEqual(tokens, [...tinyModel.tokenize(content, true)], content);
      const back = await post("/detokenize", { model: "default", tokens });
      assert.equal(back.status, 200);
      assert.deepEqual(back.json, { content: tinyModel.detokenize(tokens, true) });
    }
    // The default agent's model without `model`; add_special puts BOS first; with_pieces names each token.
    const plain = (await post("/tokenize", { content: "hello world" })).json as { tokens: number[] };
    assert.deepEqual(plain.tokens, [...tinyModel.tokenize("hello world")]);
    const special = (await post("/tokenize", { content: "hello world", add_special: true })).json as { tokens: number[] };
    assert.deepEqual(special.tokens, [tinyModel.tokens.bos, ...plain.tokens]);
    const pieces = (await post("/tokenize", { content: "hello world", with_pieces: true })).json as { tokens: Array<{ id: number; piece: string }> };
    assert.deepEqual(pieces.tokens, plain.tokens.map((id, index) => ({ id, piece: tinyModel.detokenize([id], true, plain.tokens.slice(0, index) as Token[]) })));
    assert.equal(pieces.tokens.map((token) => token.piece).join("").trim(), "hello world");
  });

  it("a token id outside the vocabulary is 400; an openai model has no tokenizer here (400)", async () => {
    const bad = await post("/detokenize", { model: "default", tokens: [1, 10_000_000] });
    assert.equal(bad.status, 400);
    assert.equal((bad.json as { error: { param: string } }).error.param, "tokens");
    const remote = await post("/tokenize", { model: "remote", content: "hello" });
    assert.equal(remote.status, 400);
    assert.equal((remote.json as { error: { code: string } }).error.code, "tokenize_not_supported");
  });

  it("llama-server: its own /tokenize and /detokenize give node-llama-cpp's tokens and text", { skip: skipServer }, async () => {
    const own = await llama.loadModel({ modelPath: rerankPath, gpuLayers: 0 });
    try {
      for (const content of TEXTS) {
        const tokens = ((await post("/tokenize", { model: "served_ranker", content })).json as { tokens: number[] }).tokens;
        assert.deepEqual(tokens, [...own.tokenize(content, true)], content);
        // The server keeps SentencePiece's leading space of a first word (the vocabulary adds one); node-llama-cpp drops it.
        const text = ((await post("/detokenize", { model: "served_ranker", tokens })).json as { content: string }).content;
        assert.equal(text.replace(/^ /, ""), own.detokenize(tokens, true), content);
      }
    } finally {
      await own.dispose();
    }
  });
});
