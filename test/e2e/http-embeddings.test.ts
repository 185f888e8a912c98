import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import OpenAI4 from "openai-v4";
import { ensureFixture, tinyHParams } from "../fixtures/gguf/index.js";
import { freePort, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { findLlamaServerBinary } from "../helpers/llama-server-binary.js";
import { embeddingsBody, sendJson, startUpstream, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";

/**
 * POST /v1/embeddings and the model facts of GET /v1/models through the built CLI, driven by the
 * official openai client: the embedded engine on a generated tiny llama GGUF (real llama.cpp
 * embeddings), an `openai` model passed through to a scripted upstream, and a llama-server model
 * that refuses (never started: refusing needs no process).
 */

const TINY_SIZE = tinyHParams().embeddingLength;
const REMOTE_VECTORS = [[0.6, 0.8], [1, 0]];

let server: HttpServer;
let upstream: ScriptedUpstream;
let upstreamRefuses = false;
/** A real llama-server (built from node-llama-cpp's llama.cpp) serves one model in embeddings mode when it exists. */
const llamaServer = findLlamaServerBinary();

before(async () => {
  upstream = await startUpstream((req, res) => {
    if (req.url !== "/v1/embeddings") return sendJson(res, 404, { error: { message: "no route" } });
    if (upstreamRefuses) return sendJson(res, 400, { error: { message: "this model does not support embeddings", type: "invalid_request_error", param: null, code: null } });
    sendJson(res, 200, embeddingsBody(REMOTE_VECTORS, 7, "upstream-embedder"));
  });
  const [demo, tiny, llamaPort, embedPort] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 }), freePort(), freePort()]);
  const embedder = llamaServer === null ? {} : { embedder: localModel(tiny, { engine: "llama-server", port: embedPort, ctx_size: 512, parallel: 1, extra_args: ["--embeddings", "--pooling", "last"] }) };
  const yaml = configYaml({
    llama: {
      ...(llamaServer === null ? {} : { binary: llamaServer }),
      models: {
        default: localModel(demo),
        tiny: localModel(tiny, { ctx_size: 4096 }),
        remote: openaiModel(upstream.baseUrl, "upstream-embedder"),
        served: { engine: "llama-server", path: tiny, port: llamaPort },
        ...embedder,
      },
    },
    agents: { assistant: { temperature: 0 }, talker: { model: "tiny" }, cloud: { model: "remote" }, server: { model: "served" }, ...(llamaServer === null ? {} : { embedding: { model: "embedder" } }) },
  });
  server = await startHttpServer(yaml);
});

after(async () => {
  await server?.stop();
  await upstream?.close();
});

const client = (): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "none", maxRetries: 0, timeout: 60_000 });
const floats = (value: unknown): number[] => value as number[];
const norm = (vector: number[]): number => Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));

/** What the error of a failed call says, as the openai client exposes it. */
function apiError(status: number, code: string, param: string | null): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.deepEqual({ status: error.status, code: error.code, param: error.param, type: error.type }, { status, code, param, type: "invalid_request_error" }, error.message);
    return true;
  };
}

describe("POST /v1/embeddings (built CLI, official openai client)", () => {
  it("embedded: one vector of the model's embedding size, unit length, the same for the same input", async () => {
    const first = await client().embeddings.create({ model: "talker", input: "hello world", encoding_format: "float" });
    assert.equal(first.object, "list");
    assert.equal(first.model, "talker");
    assert.equal(first.data.length, 1);
    assert.deepEqual(Object.keys(first.data[0] ?? {}).sort(), ["embedding", "index", "object"]);
    assert.equal(first.data[0]?.object, "embedding");
    assert.equal(first.data[0]?.index, 0);
    const vector = floats(first.data[0]?.embedding);
    assert.equal(vector.length, TINY_SIZE);
    assert.ok(Math.abs(norm(vector) - 1) < 1e-6, `norm ${norm(vector)}`);
    assert.ok(first.usage.prompt_tokens > 0);
    assert.equal(first.usage.total_tokens, first.usage.prompt_tokens);

    const again = await client().embeddings.create({ model: "talker", input: "hello world", encoding_format: "float" });
    assert.deepEqual(again.data[0]?.embedding, vector, "same input, same vector");
    // The configured model name works directly too, on the same engine.
    const byModel = await client().embeddings.create({ model: "tiny", input: "hello world", encoding_format: "float" });
    assert.equal(byModel.model, "tiny");
    assert.deepEqual(byModel.data[0]?.embedding, vector);
  });

  it("embedded: a batch answers in input order, each vector equal to its single answer", async () => {
    const inputs = ["the cat", "a green tree", "hello world"];
    const batch = await client().embeddings.create({ model: "talker", input: inputs, encoding_format: "float" });
    assert.deepEqual(batch.data.map((d) => d.index), [0, 1, 2]);
    const singles = await Promise.all(inputs.map((input) => client().embeddings.create({ model: "talker", input, encoding_format: "float" })));
    batch.data.forEach((item, index) => assert.deepEqual(item.embedding, singles[index]?.data[0]?.embedding, inputs[index]));
    assert.notDeepEqual(batch.data[0]?.embedding, batch.data[1]?.embedding, "different texts, different vectors");
    assert.equal(batch.usage.prompt_tokens, singles.reduce((sum, s) => sum + s.usage.prompt_tokens, 0));
  });

  it("base64 decodes to the same float32 values; the client's default (base64, decoded) matches too", async () => {
    const asFloat = floats((await client().embeddings.create({ model: "talker", input: "the moon", encoding_format: "float" })).data[0]?.embedding);
    const raw = await fetch(`${server.base}/v1/embeddings`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ model: "talker", input: "the moon", encoding_format: "base64" }) });
    assert.equal(raw.status, 200);
    const encoded = ((await raw.json()) as { data: Array<{ embedding: unknown }> }).data[0]?.embedding;
    assert.equal(typeof encoded, "string");
    const bytes = Buffer.from(encoded as string, "base64");
    assert.equal(bytes.length, TINY_SIZE * 4);
    const decoded = Array.from({ length: TINY_SIZE }, (_, i) => bytes.readFloatLE(i * 4));
    assert.deepEqual(decoded, asFloat.map((v) => Math.fround(v)));
    // openai v6 asks for base64 when the caller names no format, and decodes it itself.
    const byDefault = await client().embeddings.create({ model: "talker", input: "the moon" });
    assert.deepEqual(byDefault.data[0]?.embedding, decoded);
    // An older client (v4.29) asks for floats.
    const v4 = new OpenAI4({ baseURL: `${server.base}/v1`, apiKey: "none", maxRetries: 0 });
    assert.deepEqual((await v4.embeddings.create({ model: "talker", input: "the moon" })).data[0]?.embedding, asFloat);
  });

  it("token arrays embed; a token id outside the vocabulary is 400", async () => {
    const result = await client().embeddings.create({ model: "talker", input: [[5, 17, 300], [42]], encoding_format: "float" });
    assert.deepEqual(result.data.map((d) => floats(d.embedding).length), [TINY_SIZE, TINY_SIZE]);
    await assert.rejects(client().embeddings.create({ model: "talker", input: [[1, 999_999]] }), apiError(400, "invalid_request", "input"));
  });

  it("dimensions: the model's own size is accepted, any other is 400 unsupported_parameter", async () => {
    const same = await client().embeddings.create({ model: "talker", input: "x", dimensions: TINY_SIZE, encoding_format: "float" });
    assert.equal(floats(same.data[0]?.embedding).length, TINY_SIZE);
    await assert.rejects(client().embeddings.create({ model: "talker", input: "x", dimensions: 16 }), apiError(400, "unsupported_parameter", "dimensions"));
  });

  it("errors: unknown model 404, bad input 400, bad format 400, llama-server model 400 embeddings_not_supported", async () => {
    await assert.rejects(client().embeddings.create({ model: "nope", input: "x" }), (error: unknown) => error instanceof OpenAI.NotFoundError && apiError(404, "model_not_found", "model")(error));
    await assert.rejects(client().embeddings.create({ model: "talker", input: "" }), apiError(400, "invalid_request", "input"));
    await assert.rejects(client().embeddings.create({ model: "talker", input: ["ok", ""] }), apiError(400, "invalid_request", "input"));
    await assert.rejects(
      client().embeddings.create({ model: "talker", input: "x", encoding_format: "int8" as "float" }),
      apiError(400, "invalid_request", "encoding_format"),
    );
    await assert.rejects(client().embeddings.create({ model: "server", input: "x" }), (error: unknown) => {
      apiError(400, "embeddings_not_supported", "model")(error);
      assert.match((error as Error).message, /llama-server/);
      return true;
    });
  });

  it("llama-server with --embeddings in extra_args: its own /v1/embeddings, unit vectors of the model's size", { skip: llamaServer === null ? "llama-server not built: npm run build:llama-server" : false }, async () => {
    const result = await client().embeddings.create({ model: "embedder", input: ["hello world", "the cat"], encoding_format: "float" });
    assert.equal(result.model, "embedder");
    assert.deepEqual(result.data.map((d) => floats(d.embedding).length), [TINY_SIZE, TINY_SIZE]);
    assert.ok(result.data.every((d) => Math.abs(norm(floats(d.embedding)) - 1) < 1e-5));
    assert.ok(result.usage.prompt_tokens > 0);
    const again = await client().embeddings.create({ model: "embedder", input: "hello world", encoding_format: "float" });
    assert.deepEqual(again.data[0]?.embedding, result.data[0]?.embedding);
    // Chat-side completions keep working on the same server in embeddings mode (this llama.cpp build).
    const completion = await client().completions.create({ model: "embedder", prompt: "the", max_tokens: 2, temperature: 0 });
    assert.equal(completion.choices[0]?.finish_reason, "length");
  });

  it("openai engine: passed through to the upstream's /embeddings; its 400 stays a 400", async () => {
    const result = await client().embeddings.create({ model: "cloud", input: ["a", "b"], dimensions: 2, encoding_format: "float" });
    assert.equal(result.model, "cloud");
    assert.deepEqual(result.data.map((d) => d.embedding), REMOTE_VECTORS);
    assert.deepEqual(result.usage, { prompt_tokens: 7, total_tokens: 7 });
    const sent = upstream.requests.at(-1)?.body as Record<string, unknown>;
    assert.equal(sent.model, "upstream-embedder");
    assert.deepEqual(sent.input, ["a", "b"]);
    assert.equal(sent.dimensions, 2);
    upstreamRefuses = true;
    await assert.rejects(client().embeddings.create({ model: "cloud", input: "a" }), (error: unknown) => {
      apiError(400, "invalid_request", null)(error);
      assert.match((error as Error).message, /does not support embeddings/);
      return true;
    });
    upstreamRefuses = false;
  });
});

describe("GET /v1/models with model facts", () => {
  it("each agent carries its model's context_length, engine and capabilities; retrieve by id; unknown 404", async () => {
    const list = await client().models.list();
    const byId = Object.fromEntries(list.data.map((m) => [m.id, m as unknown as Record<string, unknown>]));
    assert.deepEqual(Object.keys(byId), ["assistant", "talker", "cloud", "server", ...(llamaServer === null ? [] : ["embedding"])]);
    // The default agent's model is loaded at startup: its real context (the config's 2048).
    assert.deepEqual(byId.assistant?.capabilities, { tools: true, embeddings: true, vision: false, rerank: true });
    assert.equal(byId.assistant?.engine, "embedded");
    assert.equal(byId.assistant?.context_length, 2048);
    assert.equal(byId.cloud?.engine, "openai");
    assert.deepEqual(byId.server?.capabilities, { tools: true, embeddings: false, vision: false, rerank: false });
    assert.equal(byId.server?.engine, "llama-server");
    if (llamaServer !== null) assert.deepEqual(byId.embedding?.capabilities, { tools: true, embeddings: true, vision: false, rerank: false });
    const one = (await client().models.retrieve("talker")) as unknown as Record<string, unknown>;
    assert.equal(one.id, "talker");
    assert.equal(one.object, "model");
    assert.equal(one.engine, "embedded");
    // tiny was loaded by the embeddings tests: its context is capped at the GGUF's 2048 (config asks 4096).
    assert.equal(one.context_length, 2048);
    await assert.rejects(client().models.retrieve("nope"), (error: unknown) => error instanceof OpenAI.NotFoundError && apiError(404, "model_not_found", "model")(error));
  });

  it("SIGTERM: exits 0 with the embedding contexts disposed and the llama-server child gone, no error logged", async () => {
    const health = (await (await fetch(`${server.base}/health`)).json()) as { models: Record<string, { info?: { pid?: number } }> };
    const pid = health.models.embedder?.info?.pid;
    const exit = await server.stop();
    if (pid !== undefined) assert.throws(() => process.kill(pid, 0), (error: unknown) => (error as NodeJS.ErrnoException).code === "ESRCH", "llama-server is gone");
    assert.equal(exit.code, 0, server.proc.stderr);
    assert.doesNotMatch(server.proc.stderr, /"level":(50|60)/, "no error logs");
  });
});
