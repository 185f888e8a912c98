import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText } from "ai";
import OpenAI from "openai";
import OpenAI4 from "openai-v4";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { demoAndTinyYaml, startHttpServer, type HttpServer } from "../helpers/http-server.js";

/**
 * serve-http against unmodified third-party clients: the official openai client v4.29 (an older
 * major that many apps still pin), the current openai v6 stream helper, and the Vercel AI SDK's
 * OpenAI-compatible provider. All go through a bearer token, as they would in an app.
 */

const TOKEN = "test-token-7f3a";
let server: HttpServer;

before(async () => {
  const demoPath = await ensureFixture("demo");
  server = await startHttpServer({ yaml: demoAndTinyYaml({ demoPath }), token: TOKEN });
});

after(async () => {
  await server?.stop();
});

describe("serve-http with third-party OpenAI clients (built CLI, demo model)", () => {
  it("openai v4.29: models, non-stream and stream give the demo sentence", async () => {
    const client = new OpenAI4({ baseURL: `${server.baseURL}/v1`, apiKey: TOKEN, maxRetries: 0, timeout: 30_000 });
    const models = await client.models.list();
    assert.ok(models.data.some((m) => m.id === "assistant"), JSON.stringify(models.data));

    const completion = await client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "Hello" }] });
    assert.equal(completion.object, "chat.completion");
    assert.equal(completion.choices[0]?.message.content, DEMO_SENTENCE);
    assert.equal(completion.choices[0]?.finish_reason, "stop");

    const stream = await client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "Hello" }], stream: true });
    let text = "";
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      assert.equal(chunk.object, "chat.completion.chunk");
      assert.ok(Array.isArray(chunk.choices), `a chunk without choices: ${JSON.stringify(chunk)}`);
      text += chunk.choices[0]?.delta?.content ?? "";
    }
    assert.ok(chunks > 1, `${chunks} chunks`);
    assert.equal(text, DEMO_SENTENCE);
  });

  it("openai v4.29: a wrong token is an AuthenticationError (401)", async () => {
    const client = new OpenAI4({ baseURL: `${server.baseURL}/v1`, apiKey: "wrong", maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "Hello" }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI4.APIError, String(error));
      assert.equal(error.status, 401);
      return true;
    });
  });

  it("Vercel AI SDK (openai-compatible provider): streamText and generateText give the demo sentence", async () => {
    const provider = createOpenAICompatible({ name: "local-ai", baseURL: `${server.baseURL}/v1`, apiKey: TOKEN });
    const errors: unknown[] = [];
    const result = streamText({ model: provider.chatModel("assistant"), prompt: "Hello", maxRetries: 0, onError: ({ error }) => void errors.push(error) });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    assert.equal(errors.length, 0, errors.map(String).join("; "));
    assert.equal(text, DEMO_SENTENCE);
    assert.equal(await result.finishReason, "stop");

    const generated = await generateText({ model: provider.chatModel("assistant"), prompt: "Hello", maxRetries: 0 });
    assert.equal(generated.text, DEMO_SENTENCE);
    assert.equal(generated.finishReason, "stop");
    assert.ok((generated.usage.outputTokens ?? 0) > 0, JSON.stringify(generated.usage));

    // includeUsage: the provider sends stream_options.include_usage and reads the usage chunk.
    const withUsage = createOpenAICompatible({ name: "local-ai", baseURL: `${server.baseURL}/v1`, apiKey: TOKEN, includeUsage: true });
    const counted = streamText({ model: withUsage.chatModel("assistant"), prompt: "Hello", maxRetries: 0, onError: ({ error }) => void errors.push(error) });
    let countedText = "";
    for await (const delta of counted.textStream) countedText += delta;
    assert.equal(errors.length, 0, errors.map(String).join("; "));
    assert.equal(countedText, DEMO_SENTENCE);
    const usage = await counted.usage;
    assert.ok((usage.inputTokens ?? 0) > 0 && (usage.outputTokens ?? 0) > 0, JSON.stringify(usage));
  });

  it("openai v6: the .stream() helper and stream_options.include_usage", async () => {
    const client = new OpenAI({ baseURL: `${server.baseURL}/v1`, apiKey: TOKEN, maxRetries: 0, timeout: 30_000 });
    const runner = client.chat.completions.stream({ model: "assistant", messages: [{ role: "user", content: "Hello" }] });
    let deltas = "";
    runner.on("content", (delta) => (deltas += delta));
    assert.equal(await runner.finalContent(), DEMO_SENTENCE);
    assert.equal(deltas, DEMO_SENTENCE);

    const stream = await client.chat.completions.create({
      model: "assistant",
      messages: [{ role: "user", content: "Hello" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const usages: Array<OpenAI.CompletionUsage> = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) {
        assert.deepEqual(chunk.choices, [], "the usage chunk has empty choices");
        usages.push(chunk.usage);
      }
    }
    assert.equal(text, DEMO_SENTENCE);
    assert.equal(usages.length, 1, "exactly one usage chunk");
    const usage = usages[0]!;
    assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0, JSON.stringify(usage));
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  });
});
