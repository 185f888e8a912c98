import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { EngineChunk } from "../../src/engine/chat-types.js";
import type { CompletionChunk, CompletionRequest } from "../../src/engine/completion-types.js";
import { describeModel } from "../../src/engine/describe-model.js";
import type { EmbedRequest, EmbedResult } from "../../src/engine/embedding-types.js";
import type { Engine, EngineHealth } from "../../src/engine/engine.js";
import type { EngineKind } from "../../src/config/engine-kinds.js";
import { createHttpApp } from "../../src/http/app.js";
import type { HttpDeps, ModelAccess } from "../../src/http/http-deps.js";
import { parseCompletionsRequest } from "../../src/http/openai/completions-schema.js";
import { toBase64 } from "../../src/http/openai/embedding-list.js";
import { parseEmbeddingsRequest } from "../../src/http/openai/embeddings-schema.js";
import { toOpenAiError } from "../../src/http/http-error.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { modelSchema } from "../../src/config/schema.js";
import { captureLogger } from "../helpers/capture-logger.js";

/** An engine double for the HTTP layer: records requests, plays scripted completion chunks. */
class StubEngine implements Engine {
  readonly capabilities = { images: false, requiredToolChoice: false };
  readonly embedRequests: EmbedRequest[] = [];
  readonly completeRequests: CompletionRequest[] = [];
  embed?: (request: EmbedRequest) => Promise<EmbedResult>;
  constructor(
    readonly kind: EngineKind,
    readonly modelName: string,
    private readonly script: (request: CompletionRequest) => AsyncIterable<CompletionChunk>,
    embeds = true,
  ) {
    if (embeds) {
      this.embed = (request) => {
        this.embedRequests.push(request);
        return Promise.resolve({ vectors: request.input.map((_, i) => [i, 0.5, -1.25]), promptTokens: 3 * request.input.length });
      };
    }
  }
  warmUp(): Promise<void> {
    return Promise.resolve();
  }
  // eslint-disable-next-line require-yield
  async *generate(): AsyncGenerator<EngineChunk> {
    throw new Error("not used");
  }
  complete(request: CompletionRequest): AsyncIterable<CompletionChunk> {
    this.completeRequests.push(request);
    return this.script(request);
  }
  health(): EngineHealth {
    return { state: "ready", degradationTier: "NORMAL" };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

async function* chunks(...items: CompletionChunk[]): AsyncGenerator<CompletionChunk> {
  for (const item of items) yield await Promise.resolve(item);
}

const HELLO = (): AsyncIterable<CompletionChunk> =>
  chunks({ type: "text", delta: "Hel" }, { type: "text", delta: "lo" }, { type: "usage", inputTokens: 4, outputTokens: 2 }, { type: "end", finishReason: "stop" });

function makeApp(engines: Record<string, StubEngine>, settings: Partial<HttpDeps["settings"]> = {}) {
  const models: ModelAccess = {
    names: Object.keys(engines),
    engine: async (name) => engines[name] as Engine,
    describe: (name) => describeModel(modelSchema.parse({ engine: engines[name]?.kind ?? "embedded", path: "/m.gguf", base_url: "http://x/v1" })),
    ps: async () => ({ budget: { ram_bytes: 0, vram_bytes: 0, used_ram_bytes: 0, used_vram_bytes: 0 }, models: [] }),
  };
  const deps: HttpDeps = {
    settings: { host: "127.0.0.1", port: 8080, bearerToken: null, corsOrigins: [], allowedHosts: [], maxBodyBytes: 4096, sessionQueue: false, ...settings },
    agents: { assistant: "default", coder: "served" },
    runner: () => {
      throw new Error("no chat here");
    },
    models,
    health: () => ({ warmUp: "ready", defaultModel: "default", engines: {}, tools: [] }),
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
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; param: string | null; type: string; message: string } }).error;

describe("embeddings and completions: validation and mapping", () => {
  it("embeddings input: the four OpenAI shapes become one list; empty, mixed and oversized input are 400 param input", () => {
    assert.deepEqual(parseEmbeddingsRequest({ input: "a" }).input, ["a"]);
    assert.deepEqual(parseEmbeddingsRequest({ input: ["a", "b"] }).input, ["a", "b"]);
    assert.deepEqual(parseEmbeddingsRequest({ input: [1, 2] }).input, [[1, 2]]);
    assert.deepEqual(parseEmbeddingsRequest({ input: [[1], [2, 3]] }).input, [[1], [2, 3]]);
    assert.equal(parseEmbeddingsRequest({ input: "a" }).encodingFormat, "float");
    assert.equal(parseEmbeddingsRequest({ input: "a", encoding_format: null, dimensions: null }).dimensions, undefined);
    for (const input of ["", [], [""], ["a", 1], [[]], [1.5], [-1], { a: 1 }, null, undefined, new Array(2049).fill("x")]) {
      assert.throws(() => parseEmbeddingsRequest({ input }), (error: unknown) => {
        const { status, body } = toOpenAiError(error);
        assert.deepEqual([status, body.error.code, body.error.param], [400, "invalid_request", "input"], JSON.stringify(input)?.slice(0, 40));
        return true;
      });
    }
    assert.throws(() => parseEmbeddingsRequest({ input: "a", dimensions: 0 }), (error: unknown) => toOpenAiError(error).body.error.param === "dimensions");
  });

  it("base64 is the float32 little-endian bytes", () => {
    const bytes = Buffer.from(toBase64([1, -0.5, 0.1]), "base64");
    assert.deepEqual([bytes.readFloatLE(0), bytes.readFloatLE(4), bytes.readFloatLE(8)], [1, -0.5, Math.fround(0.1)]);
  });

  it("completions body: OpenAI defaults, stop as string or list, refused fields named; nulls are absent", () => {
    const parsed = parseCompletionsRequest({ prompt: "p", stop: "\n", top_p: null, seed: 7, suffix: null, n: 1, best_of: 1, logprobs: null, echo: false, logit_bias: {} });
    assert.deepEqual(parsed, { stream: false, includeUsage: false, completion: { prompt: "p", maxTokens: 16, stop: ["\n"], temperature: 1, seed: 7 } });
    assert.deepEqual(parseCompletionsRequest({ prompt: ["only"], stop: ["a", "b"], stream: true, stream_options: { include_usage: true } }).completion.stop, ["a", "b"]);
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ n: 3 }, "n"], [{ best_of: 2 }, "best_of"], [{ logprobs: 0 }, "logprobs"], [{ echo: true }, "echo"], [{ logit_bias: { "5": 1 } }, "logit_bias"], [{ prompt: ["a", "b"] }, "prompt"],
    ];
    for (const [extra, param] of refused) {
      assert.throws(() => parseCompletionsRequest({ ...{ prompt: "p" }, ...extra }), (error: unknown) => {
        const { status, body } = toOpenAiError(error);
        assert.deepEqual([status, body.error.code, body.error.param], [400, "unsupported_parameter", param]);
        return true;
      });
    }
    for (const [extra, param] of [[{ prompt: 5 }, "prompt"], [{ max_tokens: 0 }, "max_tokens"], [{ stop: ["a", "b", "c", "d", "e"] }, "stop"], [{ temperature: -1 }, "temperature"]] as const) {
      assert.throws(() => parseCompletionsRequest({ ...{ prompt: "p" }, ...extra }), (error: unknown) => toOpenAiError(error).body.error.param === param && toOpenAiError(error).body.error.code === "invalid_request");
    }
  });

  it("an engine's precise 400 code passes through; other codes cannot be faked", () => {
    const precise = toOpenAiError(new RuntimeError("invalid_request", "no", { details: { param: "suffix", openai_code: "unsupported_parameter" } }));
    assert.deepEqual([precise.status, precise.body.error.code, precise.body.error.param], [400, "unsupported_parameter", "suffix"]);
    const bogus = toOpenAiError(new RuntimeError("invalid_request", "no", { details: { openai_code: "made_up" } }));
    assert.equal(bogus.body.error.code, "invalid_request");
    const notA400 = toOpenAiError(new RuntimeError("engine_error", "no", { details: { openai_code: "unsupported_parameter" } }));
    assert.deepEqual([notA400.status, notA400.body.error.code], [502, "engine_error"]);
  });
});

describe("embeddings and completions through the app (app.request, stub engines)", () => {
  const engines = (): Record<string, StubEngine> => ({
    default: new StubEngine("embedded", "default", HELLO),
    served: new StubEngine("llama-server", "served", HELLO, false),
  });

  it("embeddings: the engine gets the list and dimensions; float and base64 answers; llama-server is 400 embeddings_not_supported", async () => {
    const e = engines();
    const app = makeApp(e);
    const res = await app.request("/v1/embeddings", post({ model: "assistant", input: ["a", "b"], dimensions: 3 }));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      object: "list",
      data: [{ object: "embedding", index: 0, embedding: [0, 0.5, -1.25] }, { object: "embedding", index: 1, embedding: [1, 0.5, -1.25] }],
      model: "assistant",
      usage: { prompt_tokens: 6, total_tokens: 6 },
    });
    assert.deepEqual(e.default?.embedRequests[0]?.input, ["a", "b"]);
    assert.equal(e.default?.embedRequests[0]?.dimensions, 3);
    const b64 = (await (await app.request("/v1/embeddings", post({ input: "a", encoding_format: "base64" }))).json()) as { data: Array<{ embedding: string }> };
    assert.equal(b64.data[0]?.embedding, toBase64([0, 0.5, -1.25]));
    const refused = await app.request("/v1/embeddings", post({ model: "coder", input: "a" }));
    assert.equal(refused.status, 400);
    const error = await errorOf(refused);
    assert.deepEqual([error.code, error.param, error.type], ["embeddings_not_supported", "model", "invalid_request_error"]);
    assert.match(error.message, /engine llama-server/);
  });

  it("completions: non-stream object, stream frames with usage chunk and [DONE]; the engine gets the mapped request", async () => {
    const e = engines();
    const app = makeApp(e);
    const res = await app.request("/v1/completions", post({ model: "served", prompt: "p", max_tokens: 5, temperature: 0, stop: ["x"], presence_penalty: 0.5 }));
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 200);
    assert.match(String(body.id), /^cmpl-/);
    assert.deepEqual({ ...body, id: "x", created: 0 }, {
      id: "x", object: "text_completion", created: 0, model: "served",
      choices: [{ text: "Hello", index: 0, logprobs: null, finish_reason: "stop" }],
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
    });
    const sent = e.served?.completeRequests[0];
    assert.deepEqual({ ...sent, signal: undefined }, { prompt: "p", maxTokens: 5, stop: ["x"], temperature: 0, presencePenalty: 0.5, signal: undefined });

    const stream = await app.request("/v1/completions", post({ prompt: "p", stream: true, stream_options: { include_usage: true } }));
    const frames = (await stream.text()).split("\n\n").filter((f) => f !== "");
    const parsed = frames.slice(0, -1).map((f) => JSON.parse(f.slice("data: ".length)) as { choices: Array<{ text: string; finish_reason: string | null }>; usage?: unknown });
    assert.deepEqual(parsed.map((p) => p.choices.map((c) => [c.text, c.finish_reason])), [[["Hel", null]], [["lo", null]], [["", "stop"]], []]);
    assert.deepEqual(parsed.at(-1)?.usage, { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
    assert.equal(frames.at(-1), "data: [DONE]");
  });

  it("completions: an engine failure before the first chunk is a real status; after it, an error frame without [DONE]", async () => {
    const early = new StubEngine("embedded", "default", () => ({
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new RuntimeError("invalid_request", "suffix: no FIM", { details: { param: "suffix", openai_code: "unsupported_parameter" } })) }),
    }));
    const res = await makeApp({ default: early }).request("/v1/completions", post({ prompt: "p", suffix: "s", stream: true }));
    assert.equal(res.status, 400);
    const error = await errorOf(res);
    assert.deepEqual([error.code, error.param], ["unsupported_parameter", "suffix"]);

    const late = new StubEngine("embedded", "default", async function* () {
      yield await Promise.resolve({ type: "text", delta: "a" } as CompletionChunk);
      throw new RuntimeError("engine_error", "the model crashed");
    });
    const stream = await makeApp({ default: late }).request("/v1/completions", post({ prompt: "p", stream: true }));
    assert.equal(stream.status, 200);
    const frames = (await stream.text()).split("\n\n").filter((f) => f !== "");
    assert.equal(frames.length, 2);
    assert.deepEqual(JSON.parse(frames[1]?.slice(6) ?? "{}"), { error: { message: "the model crashed", type: "server_error", param: null, code: "engine_error", request_id: stream.headers.get("x-request-id") } });
  });

  it("a completion stream whose reader cancels aborts the engine's signal", async () => {
    let seen: AbortSignal | undefined;
    const endless = new StubEngine("embedded", "default", (request) => {
      seen = request.signal;
      return (async function* () {
        // An endless generation, paced at one chunk a millisecond (not a synchronization).
        while (request.signal?.aborted !== true) yield await new Promise<CompletionChunk>((resolve) => setTimeout(() => resolve({ type: "text", delta: "x" }), 1));
        throw new RuntimeError("cancelled", "cancelled");
      })();
    });
    const res = await makeApp({ default: endless }).request("/v1/completions", post({ prompt: "p", stream: true }));
    const reader = res.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    assert.equal(seen?.aborted, true);
  });

  it("the /v1 guards apply: text/plain is 415, a foreign Origin 403, the token is required, the body cap holds", async () => {
    const app = makeApp(engines(), { bearerToken: "t" });
    const auth = { Authorization: "Bearer t" };
    for (const path of ["/v1/embeddings", "/v1/completions"]) {
      assert.equal((await app.request(path, post({ input: "a", prompt: "p" }, { ...auth, "Content-Type": "text/plain" }))).status, 415, path);
      assert.equal((await app.request(path, post({ input: "a", prompt: "p" }, { ...auth, Origin: "http://evil.example" }))).status, 403, path);
      assert.equal((await app.request(path, post({ input: "a", prompt: "p" }))).status, 401, path);
      assert.equal((await app.request(path, post({ input: "a", prompt: "p".repeat(5000) }, auth))).status, 413, path);
      assert.equal((await errorOf(await app.request(path, post("{nope", auth)))).code, "invalid_json", path);
    }
    assert.equal((await app.request("/v1/models/coder", { headers: { ...HOST, ...auth } })).status, 200);
  });
});
