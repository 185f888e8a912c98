// The OpenAI chat fields through serve-http on the llama-server engine: a real llama-server (built
// from node-llama-cpp's llama.cpp) gets them passed through and honours them.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";
import { freePort, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";

const binary = findLlamaServerBinary();
if (binary === null) process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
const skip = binary === null ? "llama-server not built: npm run build:llama-server" : false;

let server: HttpServer | undefined;

before(async () => {
  if (binary === null) return;
  const [model, port] = await Promise.all([ensureFixture("demo", { toolMode: true }), freePort()]);
  const yaml = configYaml({
    llama: { binary, models: { default: localModel(model, { engine: "llama-server", port, ctx_size: 1024, parallel: 1 }) } },
    agents: { assistant: { temperature: 0 } },
  });
  server = await startHttpServer(yaml);
});

// A graceful stop takes the llama-server child with it (the CLI helper would SIGKILL serve-http).
after(async () => {
  await server?.stop();
});

const client = (): OpenAI => new OpenAI({ baseURL: `${server?.base ?? ""}/v1`, apiKey: "none", maxRetries: 0, timeout: 60_000 });
const hello = [{ role: "user" as const, content: "Hello" }];

describe("OpenAI chat fields on the llama-server engine (built CLI, real llama-server)", { skip }, () => {
  it("max_tokens cuts with finish_reason length; stop ends before the string", async () => {
    const short = await client().chat.completions.create({ model: "assistant", messages: hello, max_tokens: 3 });
    assert.equal(short.choices[0]?.finish_reason, "length");
    assert.equal(short.usage?.completion_tokens, 3);
    const stopped = await client().chat.completions.create({ model: "assistant", messages: hello, stop: ["tiny"] });
    assert.equal(stopped.choices[0]?.message.content, DEMO_SENTENCE.slice(0, DEMO_SENTENCE.indexOf("tiny")));
  });

  it("response_format json_schema: llama-server's grammar makes the content match the schema", async () => {
    const schema = { type: "object", properties: { mood: { type: "string", enum: ["happy", "sad"] }, ok: { type: "boolean" } }, required: ["mood", "ok"], additionalProperties: false };
    const completion = await client().chat.completions.create({ model: "assistant", messages: hello, max_tokens: 256, response_format: { type: "json_schema", json_schema: { name: "mood", schema, strict: true } } });
    const content = completion.choices[0]?.message.content ?? "";
    assert.equal(completion.choices[0]?.finish_reason, "stop", content);
    const parsed = JSON.parse(content) as Record<string, unknown>;
    assert.ok(["happy", "sad"].includes(String(parsed.mood)) && typeof parsed.ok === "boolean", JSON.stringify(parsed));
  });

  it("client tools: the model's call comes back as tool_calls, and the tool result gets the answer", async () => {
    const echo = { type: "function" as const, function: { name: "echo", parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] } } };
    const first = await client().chat.completions.create({ model: "assistant", messages: [{ role: "user", content: `${DEMO_TOOL_TRIGGER} hi` }], tools: [echo] });
    const call = first.choices[0]?.message.tool_calls?.[0];
    assert.equal(first.choices[0]?.finish_reason, "tool_calls", JSON.stringify(first));
    assert.equal(call?.type === "function" ? call.function.name : "", "echo");
    const answer = await client().chat.completions.create({
      model: "assistant",
      tools: [echo],
      messages: [{ role: "user", content: `${DEMO_TOOL_TRIGGER} hi` }, { role: "assistant", content: null, tool_calls: first.choices[0]?.message.tool_calls ?? [] }, { role: "tool", tool_call_id: call?.id ?? "", content: "hi" }],
    });
    assert.equal(answer.choices[0]?.message.content, DEMO_SENTENCE);
  });
});
