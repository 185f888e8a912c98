// POST /v1/messages on the llama-server engine: a real llama-server (built from node-llama-cpp's
// llama.cpp) behind serve-http, driven by the official @anthropic-ai/sdk: text, count_tokens
// equal to the prompt the same request evaluates, and the slot's cache read on the next step.
// Claude Code itself is not started here: claude-code.test.ts runs it, only under `unshare --net`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { freePort, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { assertEventShape, assertMessageShape, loadMessagesTypes } from "../helpers/messages-types.js";

const binary = findLlamaServerBinary();
if (binary === null) process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
const skip = binary === null ? "llama-server not built: npm run build:llama-server" : false;
const types = loadMessagesTypes();

let server: HttpServer | undefined;

before(async () => {
  if (binary === null) return;
  const [model, port] = await Promise.all([ensureFixture("demo"), freePort()]);
  server = await startHttpServer(
    configYaml({
      llama: { binary, models: { default: localModel(model, { engine: "llama-server", port, ctx_size: 2048, parallel: 2 }) } },
      agents: { assistant: { temperature: 0 } },
      http: { model_aliases: { "claude-*": "assistant" } },
    }),
  );
});

// A graceful stop takes the llama-server child with it.
after(async () => {
  await server?.stop();
});

const client = (): Anthropic => new Anthropic({ baseURL: server?.base ?? "", apiKey: "none", maxRetries: 0, timeout: 60_000 });

describe("POST /v1/messages on the llama-server engine (real llama-server)", { skip }, () => {
  it("text: JSON and the stream helper give the demo sentence (a claude-* name through the alias); every event has the SDK's fields", async () => {
    const message = await client().messages.create({ model: "claude-opus-4-7", max_tokens: 64, messages: [{ role: "user", content: "Hello" }] });
    assertMessageShape(types, message);
    assert.equal(message.model, "claude-opus-4-7");
    assert.deepEqual(message.content, [{ type: "text", text: DEMO_SENTENCE, citations: null }]);
    const stream = client().messages.stream({ model: "assistant", max_tokens: 64, messages: [{ role: "user", content: "Hello" }] });
    const seen: string[] = [];
    stream.on("streamEvent", (event) => {
      assertEventShape(types, event as unknown as Record<string, unknown>);
      seen.push(event.type);
    });
    const final = await stream.finalMessage();
    assert.deepEqual(final.content, [{ type: "text", text: DEMO_SENTENCE, citations: null }]);
    assert.deepEqual([seen[0], seen.at(-2), seen.at(-1)], ["message_start", "message_delta", "message_stop"]);
  });

  it("count_tokens equals input + cache read of the same request; the next step (same x-claude-code-session-id) reads the first from the slot's cache", async () => {
    const headers = { "x-claude-code-session-id": "llama-server-session" };
    const first: Anthropic.MessageParam[] = [{ role: "user", content: "Tell me about the first topic of this conversation." }];
    const counted = await client().messages.countTokens({ model: "assistant", system: "Answer briefly.", messages: first });
    const one = await client().messages.create({ model: "assistant", system: "Answer briefly.", max_tokens: 64, messages: first }, { headers });
    const prompt1 = one.usage.input_tokens + (one.usage.cache_read_input_tokens ?? 0);
    assert.equal(counted.input_tokens, prompt1, JSON.stringify(one.usage));
    const two = await client().messages.create(
      { model: "assistant", system: "Answer briefly.", max_tokens: 64, messages: [...first, { role: "assistant", content: DEMO_SENTENCE }, { role: "user", content: "And the second?" }] },
      { headers },
    );
    assert.ok((two.usage.cache_read_input_tokens ?? 0) >= prompt1 * 0.8, `step 2 read ${String(two.usage.cache_read_input_tokens)} from the cache; step 1's prompt was ${prompt1}`);
  });
});
