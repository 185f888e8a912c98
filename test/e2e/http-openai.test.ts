import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { agentsYaml, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";

let server: HttpServer;
let authed: HttpServer;

before(async () => {
  const [demo, tiny] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
  [server, authed] = await Promise.all([startHttpServer(agentsYaml(demo, tiny)), startHttpServer(agentsYaml(demo), ["--bearer-token", "t0ken"])]);
});


const client = (s: HttpServer, apiKey = "none"): OpenAI => new OpenAI({ baseURL: `${s.base}/v1`, apiKey, maxRetries: 0, timeout: 60_000 });
const messages = [{ role: "user" as const, content: "Hello!" }];

/** The tiny model's free sequences, from /health (the embedded engine reports its pool). */
async function sequencesFree(): Promise<number> {
  const health = (await (await fetch(`${server.base}/health`)).json()) as { models: Record<string, { info?: { sequences_free?: number } }> };
  return Number(health.models.tiny?.info?.sequences_free);
}

describe("serve-http with the official openai client (built CLI, real socket, embedded engine)", () => {
  it("lists the agents as models", async () => {
    const models = await client(server).models.list();
    assert.deepEqual(models.data.map((m) => [m.id, m.object, m.owned_by]), [["assistant", "model", "local-ai"], ["talker", "model", "local-ai"]]);
  });

  it("non-stream: the demo sentence with local_ai; stream: the same text; include_usage chunk", async () => {
    const completion = await client(server).chat.completions.create({ model: "assistant", messages, session_id: "n1" } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    assert.equal(completion.choices[0]?.message.content, DEMO_SENTENCE);
    assert.equal(completion.choices[0]?.finish_reason, "stop");
    const local = (completion as unknown as { local_ai: { session_id: string; trace_id: string; warnings: string[]; degradation_tier: string } }).local_ai;
    assert.equal(local.session_id, "n1");
    assert.equal(completion.id, `chatcmpl-${local.trace_id}`);
    assert.equal(local.degradation_tier, "NORMAL");
    assert.ok((completion.usage?.prompt_tokens ?? 0) > 0 && (completion.usage?.completion_tokens ?? 0) > 0);

    const stream = await client(server).chat.completions.create({ model: "assistant", messages, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish ??= chunk.choices[0]?.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, completion.choices[0]?.message.content);
    assert.equal(finish, "stop");
    // Prompt sizes differ (memory from the first turn joins the system prompt); the answer does not.
    assert.equal(usage?.completion_tokens, completion.usage?.completion_tokens);
    assert.equal(usage?.total_tokens, (usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0));
  });

  it("the stream() helper's finalChatCompletion()", async () => {
    const runner = client(server).chat.completions.stream({ model: "assistant", messages });
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0]?.message.content, DEMO_SENTENCE);
  });

  it("auth: wrong or missing token is AuthenticationError (401), the right one works", async () => {
    await assert.rejects(client(authed, "wrong").models.list(), (error: unknown) => error instanceof OpenAI.AuthenticationError && error.status === 401);
    const completion = await client(authed, "t0ken").chat.completions.create({ model: "assistant", messages });
    assert.equal(completion.choices[0]?.message.content, DEMO_SENTENCE);
    assert.equal((await fetch(`${authed.base}/health`)).status, 200, "health stays open");
  });

  it("unknown model is NotFoundError (404 model_not_found); a bad session id is 400", async () => {
    await assert.rejects(client(server).chat.completions.create({ model: "nope", messages }), (error: unknown) => error instanceof OpenAI.NotFoundError && error.code === "model_not_found");
    await assert.rejects(
      client(server).chat.completions.create({ model: "assistant", messages, session_id: "../x" } as OpenAI.ChatCompletionCreateParamsNonStreaming),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === "session_id",
    );
  });

  it("aborting mid-stream cancels the turn: the engine stops and the next request is served promptly", async () => {
    const controller = new AbortController();
    const stream = await client(server).chat.completions.create({ model: "talker", messages, stream: true, session_id: "ab1" } as OpenAI.ChatCompletionCreateParamsStreaming, { signal: controller.signal });
    let chunks = 0;
    let busyFree = -1;
    // openai v6 ends the iteration quietly (or throws APIUserAbortError) on abort: both are fine.
    await (async () => {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) chunks += 1;
        if (chunks === 3) {
          busyFree = await sequencesFree();
          controller.abort();
          // Chunks already buffered client-side would still be yielded: stop reading here.
          break;
        }
      }
    })().catch((error: unknown) => assert.ok(error instanceof OpenAI.APIUserAbortError, String(error)));
    assert.equal(chunks, 3);
    // The engine gives the generating sequence back only when generation stops: /health shows it
    // (and only /health: a bounded poll of it, the pause between reads only paces the poll).
    const deadline = Date.now() + 3000;
    while ((await sequencesFree()) !== busyFree + 1) {
      assert.ok(Date.now() < deadline, `the sequence was not released after the abort (free: ${busyFree})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The single CPU model would still be generating 3000 tokens if the turn had not stopped;
    // the next turn on the same model (sequence) must start within a few seconds.
    const started = Date.now();
    const next = await client(server).chat.completions.create({ model: "talker", messages, max_tokens: 5, stream: true, session_id: "ab2" } as OpenAI.ChatCompletionCreateParamsStreaming);
    for await (const chunk of next) {
      if (chunk.choices[0]?.delta.content) break;
    }
    assert.ok(Date.now() - started < 15_000, `next turn started after ${Date.now() - started} ms`);
    // The cancelled session keeps its checkpoint (resume continues it) and is free again.
    const resumed = await fetch(`${server.base}/v1/chat/completions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ model: "talker", messages: [], session_id: "ab1", resume: true, stream: true }) });
    assert.equal(resumed.status, 200, "the aborted turn is resumable (its checkpoint stayed) and its session is free");
    await resumed.body?.cancel();
  });

  it("SIGTERM: stops accepting, closes the runtime, exits 0", async () => {
    const exits = await Promise.all([server.stop(), authed.stop()]);
    assert.deepEqual(exits.map((e) => e.code), [0, 0], `${server.proc.stderr}\n${authed.proc.stderr}`);
    assert.doesNotMatch(server.proc.stderr + authed.proc.stderr, /"level":(50|60)/, "no error logs");
  });
});
