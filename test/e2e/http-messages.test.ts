// POST /v1/messages (Anthropic's Messages API) through the built CLI with the official
// @anthropic-ai/sdk (pinned 1.10.0): text turns on the embedded engine (demo model), tool round
// trips and thinking over a scripted upstream, every streamed event checked against the pinned
// SDK's types in exact order, count_tokens, the KV cache across steps, and refusals. Claude Code
// itself is not started here: claude-code.test.ts runs it, only under `unshare --net`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { assertEventShape, assertMessageShape, loadMessagesTypes } from "../helpers/messages-types.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { rawExchange } from "../helpers/raw-http.js";
import { readSseEvents, type SseEvent } from "../helpers/responses-sse.js";

const TOKEN = "messages-test-token";
let server: HttpServer;
let upstream: AgentUpstream;
const types = loadMessagesTypes();
const client = (init: { apiKey?: string | null; authToken?: string } = { apiKey: TOKEN }): Anthropic =>
  new Anthropic({ baseURL: server.base, ...init, maxRetries: 0, timeout: 60_000 });

type Json = Record<string, unknown>;

/** POST /v1/messages with a JSON body as Claude Code sends it (the exact wire, no client library). */
function postMessages(body: unknown, init: { signal?: AbortSignal; path?: string; headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${server.base}/v1/messages${init.path ?? "?beta=true"}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${TOKEN}`, "anthropic-version": "2023-06-01", "anthropic-beta": "interleaved-thinking-2025-05-14", ...init.headers },
    body: JSON.stringify(body),
    ...(init.signal === undefined ? {} : { signal: init.signal }),
  });
}

/** A request that must be refused: its status and Anthropic error body. */
async function refused(body: unknown, init: Parameters<typeof postMessages>[1] = {}): Promise<{ status: number; body: { type: string; error: { type: string; message: string } } }> {
  const reply = await postMessages(body, init);
  return { status: reply.status, body: (await reply.json()) as { type: string; error: { type: string; message: string } } };
}

/** The messages the upstream received in its n-th chat request (0-based). */
const upstreamBody = (n: number): Json => (upstream.chats()[n]?.body ?? {}) as Json;

/** Every event valid against the SDK's types, and their types in order. */
function typesOf(events: readonly SseEvent[]): string[] {
  for (const event of events) {
    assert.equal(event.name, event.data.type, "the SSE event name is the event's type");
    assertEventShape(types, event.data);
  }
  return events.map((event) => String(event.data.type));
}

const text = (n: number): string[] => Array<string>(n).fill("content_block_delta");

before(async () => {
  const [demo, tiny] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
  upstream = await startAgentUpstream();
  server = await startHttpServer(
    configYaml({
      llama: { models: { default: localModel(demo), tiny: localModel(tiny, { ctx_size: 2048 }), up: openaiModel(upstream.baseUrl, "test-model") } },
      agents: { assistant: { temperature: 0 }, talker: { model: "tiny", temperature: 0, max_tokens: 3000 }, remote: { model: "up", temperature: 0 } },
    }),
    [],
    { LOCAL_AI_TOKEN: TOKEN },
  );
});

after(async () => {
  await server?.stop();
  await upstream?.close();
});

describe("POST /v1/messages on the embedded engine (Anthropic SDK)", () => {
  it("messages.create: the demo sentence as one text block, end_turn, usage adding up, every required field", async () => {
    const message = await client().messages.create({ model: "assistant", max_tokens: 64, messages: [{ role: "user", content: "Hello!" }] });
    assertMessageShape(types, message);
    assert.match(message.id, /^msg_[0-9a-f]{24}$/);
    assert.deepEqual([message.type, message.role, message.model, message.stop_reason, message.stop_sequence], ["message", "assistant", "assistant", "end_turn", null]);
    assert.deepEqual(message.content, [{ type: "text", text: DEMO_SENTENCE, citations: null }]);
    assert.equal(message.usage.cache_creation_input_tokens, 0);
    assert.ok(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0) > 0 && message.usage.output_tokens > 0);
    assert.deepEqual((message as unknown as { local_ai: { warnings: string[] } }).local_ai.warnings, []);
  });

  it("stream: message_start, ping, one text block, message_delta, message_stop in exact order, each typed as the SDK declares", async () => {
    const reply = await postMessages({ model: "assistant", max_tokens: 64, top_k: 1, stream: true, messages: [{ role: "user", content: "Hello!" }] });
    assert.equal(reply.status, 200);
    assert.match(reply.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = await readSseEvents(reply);
    const deltas = events.filter((e) => e.data.type === "content_block_delta");
    assert.ok(deltas.length > 0);
    assert.deepEqual(typesOf(events), ["message_start", "ping", "content_block_start", ...text(deltas.length), "content_block_stop", "message_delta", "message_stop"]);
    const start = events[0]?.data.message as Json;
    assert.deepEqual([start.content, start.stop_reason], [[], null]);
    assert.deepEqual(events[2]?.data, { type: "content_block_start", index: 0, content_block: { type: "text", text: "", citations: null } });
    assert.equal(deltas.map((e) => (e.data.delta as { text: string }).text).join(""), DEMO_SENTENCE);
    const ending = events.at(-2)?.data as { delta: Json; usage: Json };
    assert.deepEqual([ending.delta.stop_reason, ending.delta.stop_sequence], ["end_turn", null]);
    assert.ok((ending.usage.output_tokens as number) > 0);
  });

  it("the SDK's stream: create({stream: true}) iterates the events; messages.stream().finalMessage() assembles the message", async () => {
    const stream = await client().messages.create({ model: "assistant", max_tokens: 64, stream: true, messages: [{ role: "user", content: "Hello!" }] });
    let streamed = "";
    for await (const event of stream) if (event.type === "content_block_delta" && event.delta.type === "text_delta") streamed += event.delta.text;
    assert.equal(streamed, DEMO_SENTENCE);
    const final = await client().messages.stream({ model: "assistant", max_tokens: 64, messages: [{ role: "user", content: "Hello!" }] }).finalMessage();
    assertMessageShape(types, final);
    assert.deepEqual(final.content, [{ type: "text", text: DEMO_SENTENCE, citations: null }]);
    assert.equal(final.stop_reason, "end_turn");
    assert.ok(final.usage.output_tokens > 0);
  });

  it("stop_sequences: the text ends before the stop string; stop_reason stop_sequence names it (JSON and stream)", async () => {
    const params = { model: "assistant", max_tokens: 64, stop_sequences: ["nothing", "tiny"], messages: [{ role: "user" as const, content: "Hello!" }] };
    const message = await client().messages.create(params);
    const cut = DEMO_SENTENCE.slice(0, DEMO_SENTENCE.indexOf("tiny"));
    assert.deepEqual([message.content, message.stop_reason, message.stop_sequence], [[{ type: "text", text: cut, citations: null }], "stop_sequence", "tiny"]);
    const final = await client().messages.stream(params).finalMessage();
    assert.deepEqual([final.stop_reason, final.stop_sequence], ["stop_sequence", "tiny"]);
  });

  it("count_tokens equals the whole prompt of the same request run (input + cache read + cache creation)", async () => {
    const params = { model: "assistant", system: [{ type: "text" as const, text: "You answer briefly." }], messages: [{ role: "user" as const, content: "How many tokens is this conversation, counted exactly?" }] };
    const counted = await client().messages.countTokens(params);
    const message = await client().messages.create({ ...params, max_tokens: 64 });
    const { input_tokens, cache_read_input_tokens, cache_creation_input_tokens } = message.usage;
    assert.equal(counted.input_tokens, input_tokens + (cache_read_input_tokens ?? 0) + (cache_creation_input_tokens ?? 0));
  });

  it("the KV cache across steps: step 2 (same x-claude-code-session-id) reads step 1's prompt from the cache", async () => {
    const headers = { "x-claude-code-session-id": "9d3f2a4e-session" };
    const first: Anthropic.MessageParam[] = [{ role: "user", content: "Tell me about the first topic of a long conversation here." }];
    const one = await client().messages.create({ model: "assistant", max_tokens: 64, messages: first }, { headers });
    const two = await client().messages.create(
      { model: "assistant", max_tokens: 64, messages: [...first, { role: "assistant", content: one.content as Anthropic.ContentBlockParam[] }, { role: "user", content: "And the second?" }] },
      { headers },
    );
    const prompt1 = one.usage.input_tokens + (one.usage.cache_read_input_tokens ?? 0);
    const read2 = two.usage.cache_read_input_tokens ?? 0;
    assert.ok(read2 >= prompt1 * 0.8, `step 2 read ${read2} tokens from the cache; step 1's prompt was ${prompt1}`);
    assert.ok(two.usage.input_tokens < read2, JSON.stringify(two.usage));
  });
});

describe("tools and thinking (scripted upstream)", () => {
  it("a tool round trip: tool_use streamed as input_json_delta and assembled by the SDK; the tool_result reaches the upstream", async () => {
    upstream.push({ call: { id: "toolu_01", name: "Bash", arguments: { command: "echo hi" } } }, { text: ["It ", "printed hi."] });
    const before = upstream.chats().length;
    const tools: Anthropic.Tool[] = [
      { name: "Bash", description: "Run a command", input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
      { type: "web_search_20250305", name: "web_search" } as unknown as Anthropic.Tool,
    ];
    const system = [{ type: "text" as const, text: "x-anthropic-billing-header: cc_version=2.1.328; cc_entrypoint=cli;" }, { type: "text" as const, text: "You are Claude Code.", cache_control: { type: "ephemeral" as const } }];
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: [{ type: "text", text: "Run echo hi" }] }];
    const events: string[] = [];
    const stream = client().messages.stream({ model: "remote", max_tokens: 32000, system, tools, tool_choice: { type: "auto" }, messages });
    stream.on("streamEvent", (event) => {
      assertEventShape(types, event as unknown as Json);
      events.push(event.type === "content_block_delta" ? event.delta.type : event.type);
    });
    const message = await stream.finalMessage();
    assert.deepEqual(events, ["message_start", "content_block_start", "input_json_delta", "content_block_stop", "message_delta", "message_stop"]);
    assert.equal(message.stop_reason, "tool_use");
    assert.deepEqual(message.content, [{ type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "echo hi" }, caller: { type: "direct" } }]);
    const warnings = (message as unknown as { local_ai: { warnings: string[] } }).local_ai.warnings;
    assert.deepEqual(warnings, ['tools.1: server tool type "web_search_20250305" is not served by this server; skipped']);
    const asked = upstreamBody(before);
    assert.deepEqual((asked.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name), ["Bash"]);
    const systemSent = (asked.messages as Json[])[0] as { role: string; content: string };
    assert.equal(systemSent.role, "system");
    assert.ok(systemSent.content.includes("You are Claude Code.") && !systemSent.content.includes("x-anthropic-billing-header"), systemSent.content);

    const next = await client().messages.create({
      model: "remote",
      max_tokens: 32000,
      system,
      tools,
      messages: [...messages, { role: "assistant", content: message.content as Anthropic.ContentBlockParam[] }, { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "hi\n", is_error: false, cache_control: { type: "ephemeral" } }] }],
    });
    assert.deepEqual(next.content, [{ type: "text", text: "It printed hi.", citations: null }]);
    const sent = upstreamBody(before + 1).messages as Json[];
    assert.deepEqual(sent.at(-1), { role: "tool", tool_call_id: "toolu_01", content: "hi\n" });
    assert.deepEqual((sent.at(-2) as { tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> }).tool_calls.map((call) => [call.id, call.function.name, JSON.parse(call.function.arguments) as unknown]), [["toolu_01", "Bash", { command: "echo hi" }]]);
  });

  it("thinking: the upstream's reasoning_content comes back as a thinking block with a signature (JSON and stream); display omitted keeps the block, not the text", async () => {
    const step = { reasoning: ["Let me ", "think."], text: ["Four."] };
    upstream.push(step, step, step, step);
    const params = { model: "remote", max_tokens: 1000, thinking: { type: "enabled" as const, budget_tokens: 500 }, messages: [{ role: "user" as const, content: "2+2?" }] };
    const message = await client().messages.create(params);
    assertMessageShape(types, message);
    assert.equal(message.content.length, 2);
    const [thinking, answer] = message.content;
    assert.equal(thinking?.type === "thinking" ? thinking.thinking : null, "Let me think.");
    assert.match(thinking?.type === "thinking" ? thinking.signature : "", /^local-ai\.[\w-]{43}$/);
    assert.deepEqual(answer, { type: "text", text: "Four.", citations: null });
    assert.ok((message as unknown as { local_ai: { warnings: string[] } }).local_ai.warnings.some((w) => w.startsWith("thinking.budget_tokens")));

    const events = await readSseEvents(await postMessages({ ...params, stream: true }));
    assert.deepEqual(
      typesOf(events).map((type, i) => (type === "content_block_delta" ? String((events[i]?.data.delta as Json).type) : type)),
      ["message_start", "ping", "content_block_start", "thinking_delta", "thinking_delta", "signature_delta", "content_block_stop", "content_block_start", "text_delta", "content_block_stop", "message_delta", "message_stop"],
    );
    assert.equal((events.find((e) => (e.data.delta as Json | undefined)?.type === "signature_delta")?.data.delta as Json).signature, thinking?.type === "thinking" ? thinking.signature : "");

    const omitted = await client().messages.create({ ...params, thinking: { type: "adaptive", display: "omitted" } } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    assert.deepEqual(omitted.content.map((block) => (block.type === "thinking" ? ["thinking", block.thinking, block.signature.length > 0] : [block.type])), [["thinking", "", true], ["text"]]);

    // disabled: the upstream is asked for no reasoning; what it sends anyway is left out.
    const before = upstream.chats().length;
    const disabled = await client().messages.create({ ...params, thinking: { type: "disabled" } });
    assert.deepEqual(disabled.content, [{ type: "text", text: "Four.", citations: null }]);
    assert.equal(upstreamBody(before).reasoning_effort, "none");
  });

  it("Claude Code's request shape: a system message inside messages, thinking blocks sent back, unread fields named in local_ai.warnings", async () => {
    upstream.push({ text: ["ok"] });
    const before = upstream.chats().length;
    const reply = await postMessages({
      model: "remote",
      max_tokens: 32000,
      stream: false,
      thinking: { type: "adaptive", display: "omitted" },
      context_management: { edits: [] },
      output_config: { effort: "high" },
      top_k: 5,
      metadata: { user_id: JSON.stringify({ device_id: "d", session_id: "s" }) },
      messages: [
        { role: "user", content: [{ type: "text", text: "first" }] },
        { role: "system", content: "Environment: linux, cwd /tmp" },
        { role: "assistant", content: [{ type: "thinking", thinking: "hm", signature: "x" }, { type: "redacted_thinking", data: "abc" }, { type: "text", text: "earlier answer" }] },
        { role: "user", content: [{ type: "text", text: "second", cache_control: { type: "ephemeral" } }] },
      ],
    });
    assert.equal(reply.status, 200);
    const message = (await reply.json()) as { local_ai: { warnings: string[] }; content: unknown[] };
    assert.deepEqual(message.local_ai.warnings, [
      "context_management: not implemented by this server; ignored",
      "output_config: not implemented by this server; ignored",
      "top_k is not sent by the openai engine (OpenAI-compatible servers differ on it): not applied",
    ]);
    const sent = upstreamBody(before).messages as Array<{ role: string; content: string }>;
    assert.deepEqual(sent.map((m) => m.role), ["system", "user", "assistant", "user"]);
    assert.ok(sent[0]?.content.endsWith("Environment: linux, cwd /tmp"));
    assert.equal(sent[2]?.content, "earlier answer");
    assert.equal(upstreamBody(before).top_k, undefined);
  });

  it("a failure after the stream started is an error event, never a cut stream", async () => {
    upstream.push({ cut: ["Partial "] });
    const events = await readSseEvents(await postMessages({ model: "remote", max_tokens: 100, stream: true, messages: [{ role: "user", content: "fail please" }] }));
    const last = events.at(-1)?.data as { type: string; error: { type: string; message: string } };
    assert.equal(last.type, "error");
    assert.equal(last.error.type, "api_error");
    assert.ok(last.error.message.length > 0);
    assert.deepEqual(events.slice(0, -1).map((e) => e.data.type), ["message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop"]);
  });
});

describe("refusals in the Anthropic error shape", () => {
  const user = [{ role: "user", content: "hi" }];
  const expect400 = async (body: unknown, message: RegExp): Promise<void> => {
    const { status, body: answer } = await refused(body);
    assert.equal(status, 400, JSON.stringify(answer));
    assert.equal(answer.type, "error");
    assert.equal(answer.error.type, "invalid_request_error");
    assert.match(answer.error.message, message);
  };

  it("missing max_tokens, a tool_result without its tool_use, an unknown block type, an unanswered tool_use: 400 naming the field", async () => {
    await expect400({ model: "assistant", messages: user }, /^max_tokens: Field required/);
    await expect400({ model: "assistant", max_tokens: 10, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "hi" }] }] }, /^messages\.0\.content\.0\.tool_use_id: no tool_use block/);
    await expect400({ model: "assistant", max_tokens: 10, messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "hologram", data: "b" }] }] }, /^messages\.0\.content\.1\.type: unknown or unsupported content block type "hologram"/);
    await expect400(
      { model: "assistant", max_tokens: 10, messages: [{ role: "user", content: "a" }, { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: {} }] }, { role: "user", content: "b" }] },
      /^messages\.2\.content: tool_use ids were found without tool_result blocks immediately after: toolu_1/,
    );
    await expect400({ model: "assistant", max_tokens: 10, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] }] }, /^messages\.0\.content\.0: this model takes no image input/);
    await expect400({ model: "assistant", max_tokens: 10, messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "AAAA" } }] }] }, /^messages\.0\.content\.0\.source\.type: document source type "base64"/);
    await expect400({ model: "assistant", max_tokens: 10, tool_choice: { type: "tool", name: "Nope" }, messages: user }, /^tool_choice\.name: names a tool "Nope"/);
  });

  it("an unknown model is 404 not_found_error naming it; an unknown route under /v1/messages is 404 in the same shape", async () => {
    const { status, body } = await refused({ model: "no-such-model", max_tokens: 10, messages: user });
    assert.deepEqual([status, body.error.type], [404, "not_found_error"]);
    assert.match(body.error.message, /^model: The model "no-such-model" does not exist/);
    const route = await refused({}, { path: "/batches" });
    assert.deepEqual([route.status, route.body.type, route.body.error.type], [404, "error", "not_found_error"]);
  });

  it("auth: the token as x-api-key or as a bearer token; a wrong x-api-key is 401 authentication_error", async () => {
    const viaBearer = await client({ apiKey: null, authToken: TOKEN }).messages.create({ model: "assistant", max_tokens: 16, messages: [{ role: "user", content: "Hello!" }] });
    assert.equal(viaBearer.type, "message");
    await assert.rejects(client({ apiKey: "wrong" }).messages.create({ model: "assistant", max_tokens: 16, messages: [{ role: "user", content: "Hello!" }] }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.AuthenticationError, String(error));
      assert.equal(error.status, 401);
      assert.deepEqual((error.error as { type: string; error: { type: string } }).error.type, "authentication_error");
      return true;
    });
  });

  it("the security middleware answers in the Anthropic shape: foreign Origin 403, non-JSON 415, oversized body 413, foreign Host 403", async () => {
    const origin = await refused({ model: "assistant", max_tokens: 10, messages: user }, { headers: { Origin: "https://evil.example" } });
    assert.deepEqual([origin.status, origin.body.type, origin.body.error.type], [403, "error", "permission_error"]);
    const form = await refused({ model: "assistant", max_tokens: 10, messages: user }, { headers: { "Content-Type": "text/plain" } });
    assert.deepEqual([form.status, form.body.error.type], [415, "invalid_request_error"]);
    const huge = await refused({ model: "assistant", max_tokens: 10, messages: [{ role: "user", content: "x".repeat(11 * 1024 * 1024) }] });
    assert.deepEqual([huge.status, huge.body.error.type], [413, "request_too_large"]);
    const body = JSON.stringify({ model: "assistant", max_tokens: 10, messages: user });
    const { responses } = await rawExchange(server.port, `POST /v1/messages HTTP/1.1\r\nHost: evil.example\r\nx-api-key: ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    assert.equal(responses[0]?.status, 403);
    assert.deepEqual((JSON.parse(responses[0]?.body ?? "{}") as { error: { type: string } }).error.type, "permission_error");
  });

  it("an over-long conversation is a 400 naming messages (nothing is trimmed silently)", async () => {
    const long = Array.from({ length: 3000 }, (_, i) => `word${i}`).join(" ");
    await expect400({ model: "talker", max_tokens: 64, messages: [{ role: "user", content: long }] }, /^messages: The input does not fit the context window/);
  });

  it("ping events while the model is silent; a client that disconnects mid-stream cancels the turn", async (t) => {
    // A second server on the same upstream whose keep-alive interval is short (the default is 10 s).
    const pinging = await startHttpServer(configYaml({ llama: { models: { up: openaiModel(upstream.baseUrl, "test-model") } }, agents: { remote: { model: "up", temperature: 0 } } }), [], { LOCAL_AI_TOKEN: TOKEN, LOCAL_AI_HTTP_KEEPALIVE_MS: "100" });
    t.after(() => pinging.stop());
    upstream.push({ hang: ["One ", "two "] });
    const controller = new AbortController();
    const reply = await fetch(`${pinging.base}/v1/messages`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "x-api-key": TOKEN },
      body: JSON.stringify({ model: "remote", max_tokens: 100, stream: true, messages: [{ role: "user", content: "hang" }] }),
      signal: controller.signal,
    });
    assert.equal(reply.status, 200);
    const reader = reply.body!.getReader();
    let seen = "";
    // Two deltas, then the upstream goes silent: pings keep coming.
    while ((seen.split("text_delta")[2] ?? "").split("event: ping\ndata: {\"type\":\"ping\"}").length < 3) {
      const { value, done } = await reader.read();
      assert.ok(!done, "the stream ended before two deltas and two pings");
      seen += new TextDecoder().decode(value);
    }
    controller.abort();
    // The turn stops and leaves /health's in_flight (a bounded poll: /health is the only signal).
    const deadline = Date.now() + 5000;
    for (;;) {
      const health = (await (await fetch(`${pinging.base}/health`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as { in_flight: number };
      if (health.in_flight === 0) break;
      assert.ok(Date.now() < deadline, "the turn was not cancelled");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The upstream request was hung up on (the engine stopped), not finished.
    const hung = upstream.chats().at(-1);
    assert.deepEqual((await hung!.closed).finished, false);
  });
});
