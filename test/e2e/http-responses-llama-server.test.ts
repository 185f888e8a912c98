// POST /v1/responses on the llama-server engine: a real llama-server (built from node-llama-cpp's
// llama.cpp) behind serve-http, driven by the official openai client: text, a function tool round
// trip the model really makes, and a previous_response_id chain served from the slot's cache.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { freePort, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { assertEventShape, assertResponseShape, loadResponsesTypes } from "../helpers/responses-types.js";

const binary = findLlamaServerBinary();
if (binary === null) process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
const skip = binary === null ? "llama-server not built: npm run build:llama-server" : false;
const types = loadResponsesTypes();

let server: HttpServer | undefined;

before(async () => {
  if (binary === null) return;
  const [model, port] = await Promise.all([ensureFixture("demo", { toolMode: true }), freePort()]);
  server = await startHttpServer(
    configYaml({
      llama: { binary, models: { default: localModel(model, { engine: "llama-server", port, ctx_size: 2048, parallel: 2 }) } },
      agents: { assistant: { temperature: 0 } },
    }),
  );
});

// A graceful stop takes the llama-server child with it.
after(async () => {
  await server?.stop();
});

const client = (): OpenAI => new OpenAI({ baseURL: `${server?.base ?? ""}/v1`, apiKey: "none", maxRetries: 0, timeout: 60_000 });

describe("POST /v1/responses on the llama-server engine (real llama-server)", { skip }, () => {
  it("text: JSON and the stream helper give the demo sentence; every event has the pinned types' fields", async () => {
    const response = await client().responses.create({ model: "assistant", input: "Hello", store: false });
    assertResponseShape(types, response);
    assert.equal(response.output_text, DEMO_SENTENCE);
    const stream = client().responses.stream({ model: "assistant", input: "Hello", store: false });
    const seen: string[] = [];
    stream.on("event", (event) => {
      assertEventShape(types, event as unknown as Record<string, unknown>);
      seen.push(event.type);
    });
    const final = await stream.finalResponse();
    assert.equal(final.output_text, DEMO_SENTENCE);
    assert.deepEqual([seen[0], seen[1], seen.at(-1)], ["response.created", "response.in_progress", "response.completed"]);
    // Thinking off (chat_template_kwargs.enable_thinking: false) is accepted; this template has no switch.
    const quiet = await client().responses.create({ model: "assistant", input: "Hello", reasoning: { effort: "none" }, store: false });
    assert.equal(quiet.output_text, DEMO_SENTENCE);
  });

  it("a function tool the model calls comes back as a function_call item; its output gets the answer", async () => {
    const echo = { type: "function" as const, name: "echo", parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] }, strict: false };
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: `${DEMO_TOOL_TRIGGER} hi` }];
    const first = await client().responses.create({ model: "assistant", input, tools: [echo], store: false });
    const call = first.output.find((item) => item.type === "function_call");
    assert.ok(call?.type === "function_call", JSON.stringify(first.output));
    assert.equal(call.name, "echo");
    assert.deepEqual(JSON.parse(call.arguments), { message: "hi" });
    const answer = await client().responses.create({ model: "assistant", input: [...input, call, { type: "function_call_output", call_id: call.call_id, output: "hi" }], tools: [echo], store: false });
    assert.equal(answer.output_text, DEMO_SENTENCE);
  });

  it("previous_response_id: the second turn's prompt is served from the conversation's slot cache", async () => {
    const first = await client().responses.create({ model: "assistant", input: "Hello" });
    const second = await client().responses.create({ model: "assistant", input: "Hello again", previous_response_id: first.id });
    const cached = second.usage?.input_tokens_details.cached_tokens ?? 0;
    assert.ok(cached >= (first.usage?.input_tokens ?? Infinity) - 1 && cached < (second.usage?.input_tokens ?? 0), `cached ${cached}: first ${first.usage?.input_tokens}, second ${second.usage?.input_tokens}`);
  });
});
