import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { freePort, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { findLlamaServerBinary } from "../helpers/llama-server-binary.js";
import { sendData, sendJson, startSse, startUpstream, textChunk, usageChunk, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";

/**
 * POST /v1/completions through the built CLI with the official openai client: the embedded engine
 * (LlamaCompletion on the generated demo model, whose greedy continuation of any prompt is
 * DEMO_SENTENCE; the tiny model never stops, for the abort test), and an `openai` model passed
 * through to a scripted upstream.
 */

let server: HttpServer;
let upstream: ScriptedUpstream;
/** A real llama-server (built from node-llama-cpp's llama.cpp) serves one model when it exists. */
const llamaServer = findLlamaServerBinary();

before(async () => {
  upstream = await startUpstream((req, res) => {
    if (req.url !== "/v1/completions") return sendJson(res, 404, { error: { message: "no route" } });
    startSse(res);
    for (const text of ["def ", "add(a, b):"]) sendData(res, textChunk(text));
    sendData(res, textChunk("", "length"));
    sendData(res, { ...usageChunk(5, 2), object: "text_completion" });
    sendData(res, "[DONE]");
    res.end();
  });
  const [demo, tiny, llamaPort] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 }), freePort()]);
  const served = llamaServer === null ? {} : { served: localModel(demo, { engine: "llama-server", port: llamaPort, ctx_size: 512, parallel: 1 }) };
  const yaml = configYaml({
    llama: {
      ...(llamaServer === null ? {} : { binary: llamaServer }),
      models: { default: localModel(demo), tiny: localModel(tiny, { parallel: 1 }), remote: openaiModel(upstream.baseUrl, "upstream-coder"), ...served },
    },
    agents: { assistant: { temperature: 0 }, talker: { model: "tiny" }, cloud: { model: "remote" } },
  });
  server = await startHttpServer(yaml);
});

// The CLI helper SIGKILLs whatever is still running after the file: the last test stops the server
// gracefully first, so a llama-server child it started is closed with it.
after(async () => {
  await upstream?.close();
});

const client = (): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "none", maxRetries: 0, timeout: 60_000 });

function apiError(status: number, code: string, param: string | null): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.deepEqual({ status: error.status, code: error.code, param: error.param, type: error.type }, { status, code, param, type: "invalid_request_error" }, error.message);
    return true;
  };
}

/** The tiny model's free sequences, from /health (the embedded engine reports its pool). */
async function sequencesFree(): Promise<number> {
  const health = (await (await fetch(`${server.base}/health`)).json()) as { models: Record<string, { info?: { sequences_free?: number } }> };
  return Number(health.models.tiny?.info?.sequences_free);
}

describe("POST /v1/completions (built CLI, official openai client)", () => {
  it("non-stream: a text_completion with the model's continuation, finish_reason stop, usage", async () => {
    const completion = await client().completions.create({ model: "assistant", prompt: "Say something:", max_tokens: 64, temperature: 0 });
    assert.match(completion.id, /^cmpl-[0-9a-f]{24}$/);
    assert.equal(completion.object, "text_completion");
    assert.equal(completion.model, "assistant");
    assert.equal(typeof completion.created, "number");
    assert.deepEqual(completion.choices, [{ text: DEMO_SENTENCE, index: 0, logprobs: null, finish_reason: "stop" }]);
    assert.ok((completion.usage?.prompt_tokens ?? 0) > 0);
    assert.ok((completion.usage?.completion_tokens ?? 0) > 0);
    assert.equal(completion.usage?.total_tokens, (completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0));
  });

  it("max_tokens cuts with finish_reason length; stop strings end it before the stop text", async () => {
    const short = await client().completions.create({ model: "assistant", prompt: "Say something:", max_tokens: 3, temperature: 0 });
    assert.equal(short.choices[0]?.finish_reason, "length");
    assert.equal(short.usage?.completion_tokens, 3);
    assert.ok(DEMO_SENTENCE.startsWith(short.choices[0]?.text ?? "?") && (short.choices[0]?.text.length ?? 0) > 0, short.choices[0]?.text);
    const stopped = await client().completions.create({ model: "assistant", prompt: "Say something:", max_tokens: 64, temperature: 0, stop: ["demo"] });
    assert.equal(stopped.choices[0]?.finish_reason, "stop");
    assert.equal(stopped.choices[0]?.text, DEMO_SENTENCE.slice(0, DEMO_SENTENCE.indexOf("demo")));
  });

  it("stream: text_completion chunks add up to the same text, then the finish chunk, the usage chunk, [DONE]", async () => {
    const stream = await client().completions.create({ model: "assistant", prompt: "Say something:", max_tokens: 64, temperature: 0, stream: true, stream_options: { include_usage: true } });
    let text = "";
    const finishes: Array<string | null | undefined> = [];
    let usage: OpenAI.CompletionUsage | undefined;
    let pieces = 0;
    for await (const chunk of stream) {
      assert.equal(chunk.object, "text_completion");
      assert.equal(chunk.model, "assistant");
      if (chunk.usage) {
        assert.deepEqual(chunk.choices, []);
        usage = chunk.usage;
        continue;
      }
      assert.equal(chunk.choices.length, 1);
      assert.equal(chunk.choices[0]?.logprobs, null);
      if ((chunk.choices[0]?.text ?? "") !== "") pieces += 1;
      text += chunk.choices[0]?.text ?? "";
      finishes.push(chunk.choices[0]?.finish_reason);
    }
    assert.equal(text, DEMO_SENTENCE);
    assert.ok(pieces > 1, "streamed in pieces");
    assert.deepEqual(finishes.slice(-1), ["stop"]);
    assert.ok(finishes.slice(0, -1).every((f) => f === null), JSON.stringify(finishes));
    assert.ok((usage?.completion_tokens ?? 0) > 0);

    // The raw wire: standard frames only, ending with [DONE].
    const raw = await fetch(`${server.base}/v1/completions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ model: "assistant", prompt: "x", max_tokens: 2, temperature: 0, stream: true }) });
    assert.match(raw.headers.get("content-type") ?? "", /^text\/event-stream/);
    const frames = (await raw.text()).split("\n\n").filter((f) => f !== "");
    assert.ok(frames.every((f) => f.startsWith("data: ")), JSON.stringify(frames));
    assert.equal(frames.at(-1), "data: [DONE]");
    assert.equal((JSON.parse(frames.at(-2)?.slice(6) ?? "{}") as { choices: Array<{ finish_reason: string }> }).choices[0]?.finish_reason, "length");
  });

  it("refused fields are 400 unsupported_parameter naming the field; suffix on a model without FIM tokens too", async () => {
    const base = { model: "assistant", prompt: "x" };
    await assert.rejects(client().completions.create({ ...base, n: 2 }), apiError(400, "unsupported_parameter", "n"));
    await assert.rejects(client().completions.create({ ...base, best_of: 2 }), apiError(400, "unsupported_parameter", "best_of"));
    await assert.rejects(client().completions.create({ ...base, logprobs: 2 }), apiError(400, "unsupported_parameter", "logprobs"));
    await assert.rejects(client().completions.create({ ...base, echo: true }), apiError(400, "unsupported_parameter", "echo"));
    await assert.rejects(client().completions.create({ ...base, prompt: ["a", "b"] }), apiError(400, "unsupported_parameter", "prompt"));
    await assert.rejects(client().completions.create({ ...base, suffix: "return a" }), apiError(400, "unsupported_parameter", "suffix"));
    // Streaming refuses before the stream starts: a real status, not an error frame.
    await assert.rejects(client().completions.create({ ...base, suffix: "return a", stream: true }), apiError(400, "unsupported_parameter", "suffix"));
    await assert.rejects(client().completions.create({ ...base, temperature: 5 }), apiError(400, "invalid_request", "temperature"));
    await assert.rejects(client().completions.create({ ...base, model: "nope" }), (error: unknown) => error instanceof OpenAI.NotFoundError && apiError(404, "model_not_found", "model")(error));
    // An empty suffix is no infill: a plain completion.
    const plain = await client().completions.create({ ...base, suffix: "", max_tokens: 2, temperature: 0 });
    assert.equal(plain.choices[0]?.finish_reason, "length");
  });

  it("aborting a stream stops generation: the sequence goes back to the pool and the next request runs", async () => {
    const controller = new AbortController();
    const stream = await client().completions.create({ model: "talker", prompt: "the cat", max_tokens: 3000, temperature: 0, stream: true }, { signal: controller.signal });
    let pieces = 0;
    await (async () => {
      for await (const chunk of stream) {
        if ((chunk.choices[0]?.text ?? "") !== "") pieces += 1;
        if (pieces === 3) {
          assert.equal(await sequencesFree(), 0, "the one sequence is busy while generating");
          controller.abort();
          break;
        }
      }
    })().catch((error: unknown) => assert.ok(error instanceof OpenAI.APIUserAbortError, String(error)));
    const deadline = Date.now() + 3000;
    while ((await sequencesFree()) !== 1) {
      assert.ok(Date.now() < deadline, "the sequence was not released after the abort");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // parallel: 1, so this waits for the sequence: it would hang for 3000 tokens had the abort not stopped it.
    const next = await client().completions.create({ model: "tiny", prompt: "the cat", max_tokens: 4, temperature: 0 });
    assert.equal(next.choices[0]?.finish_reason, "length");
    assert.equal(next.usage?.completion_tokens, 4);
  });

  it("llama-server engine: its own /v1/completions gives the demo model's continuation (stream and not)", { skip: llamaServer === null ? "llama-server not built: npm run build:llama-server" : false }, async () => {
    const completion = await client().completions.create({ model: "served", prompt: "Say something:", max_tokens: 64, temperature: 0 });
    assert.equal(completion.model, "served");
    assert.deepEqual(completion.choices.map((c) => [c.text, c.finish_reason]), [[DEMO_SENTENCE, "stop"]]);
    assert.ok((completion.usage?.completion_tokens ?? 0) > 0);
    const stream = await client().completions.create({ model: "served", prompt: "Say something:", max_tokens: 3, temperature: 0, stream: true });
    let text = "";
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.ok(DEMO_SENTENCE.startsWith(text) && text.length > 0, text);
    assert.equal(finish, "length");
  });

  it("openai engine: passed through to the upstream's /completions (stream and not)", async () => {
    const completion = await client().completions.create({ model: "cloud", prompt: "# add\n", suffix: "\n", max_tokens: 8, temperature: 0.2, stop: ["\n\n"] });
    assert.equal(completion.model, "cloud");
    assert.deepEqual(completion.choices, [{ text: "def add(a, b):", index: 0, logprobs: null, finish_reason: "length" }]);
    assert.deepEqual(completion.usage, { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    const sent = upstream.requests.at(-1)?.body as Record<string, unknown>;
    assert.deepEqual(
      { model: sent.model, prompt: sent.prompt, suffix: sent.suffix, max_tokens: sent.max_tokens, temperature: sent.temperature, stop: sent.stop, stream: sent.stream },
      { model: "upstream-coder", prompt: "# add\n", suffix: "\n", max_tokens: 8, temperature: 0.2, stop: ["\n\n"], stream: true },
    );
    const stream = await client().completions.create({ model: "cloud", prompt: "# add\n", stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
    assert.equal(text, "def add(a, b):");
  });

  it("SIGTERM: serve-http exits 0 and takes the llama-server child it started with it", async () => {
    const health = (await (await fetch(`${server.base}/health`)).json()) as { models: Record<string, { info?: { pid?: number } }> };
    const pid = health.models.served?.info?.pid;
    const exit = await server.stop();
    assert.equal(exit.code, 0, server.proc.stderr);
    if (llamaServer === null) return;
    assert.equal(typeof pid, "number", JSON.stringify(health.models.served));
    assert.throws(() => process.kill(pid as number, 0), (error: unknown) => (error as NodeJS.ErrnoException).code === "ESRCH", "llama-server is gone");
  });
});
