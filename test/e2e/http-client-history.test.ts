// serve-http as OpenAI clients really use it: the conversation kept by the client, client-defined
// tools, per-request sampling and structured output, through the built CLI with real clients
// (openai 6 and 4.29, the Vercel AI SDK) on the embedded engine and on a scripted upstream.
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateObject, generateText, jsonSchema, stepCountIs, tool } from "ai";
import OpenAI from "openai";
import OpenAI4 from "openai-v4";
import { z } from "zod";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { chunk, scripted, listingModel, startUpstream, usageChunk, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";

type Json = Record<string, unknown>;

let embedded: HttpServer;
let tools: HttpServer;

/** Nothing may appear under data_dir for a conversation kept by the client. */
const sessionsOf = async (server: HttpServer): Promise<string[]> => readdir(path.join(server.dir, "data", "sessions"), { recursive: true }).catch(() => []);

before(async () => {
  const [demo, demoTools] = await Promise.all([ensureFixture("demo"), ensureFixture("demo", { toolMode: true })]);
  const yaml = (file: string): string => configYaml({ llama: { models: { default: localModel(file) } }, agents: { assistant: { temperature: 0 } } });
  [embedded, tools] = await Promise.all([
    startHttpServer(yaml(demo)),
    // No MCP servers: the only tools are the ones the client brings.
    startHttpServer(yaml(demoTools)),
  ]);
});

after(async () => {
  await Promise.all([embedded?.stop(), tools?.stop()]);
});

describe("a conversation kept by the client (embedded engine)", () => {
  it("openai 6 and 4.29: three turns reach the model whole, and nothing is stored", async () => {
    type Create = (body: { model: string; messages: Array<{ role: "system" | "user" | "assistant"; content: string }>; user: string }) => Promise<{ choices: Array<{ message: { content: string | null } }>; usage?: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } } }>;
    const v6 = new OpenAI({ baseURL: `${embedded.base}/v1`, apiKey: "x", maxRetries: 0 });
    const v4 = new OpenAI4({ baseURL: `${embedded.base}/v1`, apiKey: "x", maxRetries: 0 });
    const clients: Array<{ chat: { completions: { create: Create } } }> = [v6, v4];
    for (const client of clients) {
      const messages: Array<{ role: "system" | "user" | "assistant"; content: string }> = [{ role: "system", content: "Answer briefly." }];
      const prompts: number[] = [];
      const cached: number[] = [];
      for (const text of ["Hello", "And again", "Once more"]) {
        messages.push({ role: "user", content: text });
        const completion = await client.chat.completions.create({ model: "assistant", messages, user: "bob@example.com" });
        const answer = completion.choices[0]?.message.content ?? "";
        assert.equal(answer, DEMO_SENTENCE);
        assert.equal((completion as unknown as { local_ai: Json }).local_ai.session_id, undefined, "no session in client-kept mode");
        prompts.push(completion.usage?.prompt_tokens ?? 0);
        cached.push(completion.usage?.prompt_tokens_details?.cached_tokens ?? -1);
        messages.push({ role: "assistant", content: answer });
      }
      assert.ok((prompts[1] ?? 0) > (prompts[0] ?? 0) + 10 && (prompts[2] ?? 0) > (prompts[1] ?? 0) + 10, `each turn carries the ones before: ${prompts.join(" -> ")}`);
      // The conversation so far is still in a sequence's KV cache: only the new part is evaluated
      // (the second client replays the first one's conversation, so all of it may be cached).
      for (const turn of [1, 2]) assert.ok((cached[turn] ?? 0) >= (prompts[turn - 1] ?? 0) && (cached[turn] ?? 0) <= (prompts[turn] ?? 0), `cached ${cached.join(",")} of ${prompts.join(",")}`);
    }
    assert.deepEqual(await sessionsOf(embedded), []);
  });

  it("per-request fields: max_tokens cuts the answer (finish_reason length), stop ends it early, unknown fields are listed", async () => {
    const client = new OpenAI({ baseURL: `${embedded.base}/v1`, apiKey: "x", maxRetries: 0 });
    const short = await client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "Hello" }], max_tokens: 3 });
    assert.equal(short.choices[0]?.finish_reason, "length");
    assert.equal(short.usage?.completion_tokens, 3);
    assert.ok(DEMO_SENTENCE.startsWith(short.choices[0]?.message.content ?? "x"));
    const stopped = await client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "Hello" }], stop: ["tiny"] });
    assert.equal(stopped.choices[0]?.message.content, DEMO_SENTENCE.slice(0, DEMO_SENTENCE.indexOf("tiny")));
    const odd = await client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "Hello" }], metadata: { a: "b" } } as never);
    assert.deepEqual((odd as unknown as { local_ai: { warnings: string[] } }).local_ai.warnings, ['ignored field "metadata": not supported by this server']);
    await assert.rejects(client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "Hello" }], n: 2 }), (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === "n");
    await assert.rejects(
      client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] }] }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === "messages[0].content[0]",
    );
  });

  it("response_format json_schema (openai) and generateObject (AI SDK) give JSON that matches the schema", async () => {
    const schema = { type: "object", properties: { mood: { type: "string", enum: ["happy", "sad"] }, ok: { type: "boolean" } }, required: ["mood", "ok"], additionalProperties: false };
    const client = new OpenAI({ baseURL: `${embedded.base}/v1`, apiKey: "x", maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "How are you?" }], response_format: { type: "json_schema", json_schema: { name: "mood", schema, strict: true } } });
    const parsed = JSON.parse(completion.choices[0]?.message.content ?? "") as Json;
    assert.ok(["happy", "sad"].includes(String(parsed.mood)) && typeof parsed.ok === "boolean", JSON.stringify(parsed));
    const provider = createOpenAICompatible({ name: "local-ai", baseURL: `${embedded.base}/v1`, supportsStructuredOutputs: true });
    const { object } = await generateObject({ model: provider("assistant"), schema: z.object({ mood: z.enum(["happy", "sad"]), ok: z.boolean() }), prompt: "How are you?", maxRetries: 0 });
    assert.ok(["happy", "sad"].includes(object.mood) && typeof object.ok === "boolean");
    assert.deepEqual(await sessionsOf(embedded), []);
  });
});

describe("client-defined tools (embedded engine, demo tool model)", () => {
  it("openai 6: the call comes back as streamed delta.tool_calls, assembled by the stream helper", async () => {
    const client = new OpenAI({ baseURL: `${tools.base}/v1`, apiKey: "x", maxRetries: 0 });
    const echo = { type: "function" as const, function: { name: "echo", description: "Echoes a message", parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] } } };
    const stream = client.chat.completions.stream({ model: "assistant", messages: [{ role: "user", content: `${DEMO_TOOL_TRIGGER} hi` }], tools: [echo] });
    const final = await stream.finalChatCompletion();
    const choice = final.choices[0];
    assert.equal(choice?.finish_reason, "tool_calls");
    const call = choice?.message.tool_calls?.[0];
    assert.equal(call?.type, "function");
    assert.equal(call?.type === "function" ? call.function.name : "", "echo");
    assert.deepEqual(JSON.parse(call?.type === "function" ? call.function.arguments : "{}"), { message: "hi" });
    // The client runs the tool and sends the result: the model answers.
    const answer = await client.chat.completions.create({
      model: "assistant",
      tools: [echo],
      messages: [{ role: "user", content: `${DEMO_TOOL_TRIGGER} hi` }, { role: "assistant", content: null, tool_calls: choice?.message.tool_calls ?? [] }, { role: "tool", tool_call_id: call?.id ?? "", content: "hi" }],
    });
    assert.equal(answer.choices[0]?.finish_reason, "stop");
    assert.equal(answer.choices[0]?.message.content, DEMO_SENTENCE);
    assert.deepEqual(await sessionsOf(tools), []);
  });

  it("AI SDK generateText runs the client tool and finishes the round trip", async () => {
    const provider = createOpenAICompatible({ name: "local-ai", baseURL: `${tools.base}/v1` });
    const calls: unknown[] = [];
    const result = await generateText({
      model: provider("assistant"),
      prompt: `${DEMO_TOOL_TRIGGER} hi`,
      tools: { echo: tool({ description: "Echoes a message", inputSchema: z.object({ message: z.string() }), execute: async (input) => (calls.push(input), input.message) }) },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    assert.deepEqual(calls, [{ message: "hi" }]);
    assert.equal(result.steps.length, 2);
    assert.equal(result.steps[0]?.finishReason, "tool-calls");
    assert.equal(result.text, DEMO_SENTENCE);
  });
});

describe("client-kept history and client tools on the openai engine (scripted upstream)", () => {
  let upstream: ScriptedUpstream;
  let server: HttpServer;
  before(async () => {
    let calls = 0;
    upstream = await startUpstream(
      listingModel("up-model", (req, res, body) => {
        const hasToolResult = ((body as { messages: Json[] }).messages ?? []).some((m) => m.role === "tool");
        calls++;
        if ((body as Json).tools !== undefined && !hasToolResult) {
          return scripted([
            chunk({ role: "assistant", content: "" }),
            chunk({ tool_calls: [{ index: 0, id: `call_up${calls}`, type: "function", function: { name: "weather", arguments: "" } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
            chunk({}, "tool_calls"),
            usageChunk(20, 5),
          ])(req, res, body);
        }
        return scripted([chunk({ role: "assistant", content: "" }), chunk({ content: hasToolResult ? "Sunny in Paris." : "Noted." }), chunk({}, "stop"), usageChunk(10, 2)])(req, res, body);
      }),
    );
    const yaml = configYaml({ llama: { models: { default: openaiModel(upstream.baseUrl, "up-model") } }, agents: { assistant: { system_prompt: "You are the agent." } } });
    server = await startHttpServer(yaml);
  });
  after(async () => {
    await server?.stop();
    await upstream?.close();
  });

  it("the upstream receives the whole conversation and every sampling field", async () => {
    const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0 });
    const messages = [
      { role: "system" as const, content: "Be terse." },
      { role: "user" as const, content: "one" },
      { role: "assistant" as const, content: "Noted." },
      { role: "user" as const, content: "two" },
      { role: "assistant" as const, content: "Noted." },
      { role: "user" as const, content: "three" },
    ];
    const completion = await client.chat.completions.create({
      model: "assistant", messages, temperature: 0.3, top_p: 0.9, max_tokens: 77, stop: ["END"], seed: 42, frequency_penalty: 0.5, presence_penalty: 0.25,
      response_format: { type: "json_object" },
    });
    assert.equal(completion.choices[0]?.message.content, "Noted.");
    const sent = upstream.requests.findLast((r) => r.url === "/v1/chat/completions")?.body as Json;
    assert.deepEqual(sent.messages, [
      { role: "system", content: "You are the agent.\n\nBe terse." },
      { role: "user", content: "one" },
      { role: "assistant", content: "Noted." },
      { role: "user", content: "two" },
      { role: "assistant", content: "Noted." },
      { role: "user", content: "three" },
    ]);
    assert.deepEqual(
      { temperature: sent.temperature, top_p: sent.top_p, max_tokens: sent.max_tokens, stop: sent.stop, seed: sent.seed, frequency_penalty: sent.frequency_penalty, presence_penalty: sent.presence_penalty, response_format: sent.response_format },
      { temperature: 0.3, top_p: 0.9, max_tokens: 77, stop: ["END"], seed: 42, frequency_penalty: 0.5, presence_penalty: 0.25, response_format: { type: "json_object" } },
    );
    assert.deepEqual(await sessionsOf(server), []);
  });

  it("AI SDK tool round trip: the upstream's call reaches the client, its result goes back upstream", async () => {
    const provider = createOpenAICompatible({ name: "local-ai", baseURL: `${server.base}/v1` });
    const seen: unknown[] = [];
    const result = await generateText({
      model: provider("assistant"),
      prompt: "Weather in Paris?",
      tools: { weather: tool({ description: "Weather for a city", inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }), execute: async (input) => (seen.push(input), "sunny") }) },
      toolChoice: "required",
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    assert.deepEqual(seen, [{ city: "Paris" }]);
    assert.equal(result.text, "Sunny in Paris.");
    const chats = upstream.requests.filter((r) => r.url === "/v1/chat/completions");
    const first = chats.at(-2)?.body as Json;
    assert.equal(first.tool_choice, "required");
    assert.deepEqual((first.tools as Json[]).map((t) => (t.function as Json).name), ["weather"]);
    const second = chats.at(-1)?.body as { messages: Json[] };
    const toolMessage = second.messages.find((m) => m.role === "tool");
    assert.equal(toolMessage?.tool_call_id, (second.messages.find((m) => m.role === "assistant")?.tool_calls as Json[] | undefined)?.[0]?.id);
    assert.match(String(toolMessage?.content), /sunny/);
  });
});
