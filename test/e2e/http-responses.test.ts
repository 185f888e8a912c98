// POST /v1/responses through the built CLI with the official openai client (pinned 6.30.1): text
// turns on the embedded engine (demo model), the exact event stream checked against the pinned
// package's types, structured output, store / previous_response_id, and refusals.
import assert from "node:assert/strict";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { postResponses, readSseEvents } from "../helpers/responses-sse.js";
import { assertEventShape, assertResponseShape, loadResponsesTypes } from "../helpers/responses-types.js";

let server: HttpServer;
let upstream: AgentUpstream;
/** data_dir's files once the server was ready: a turn with store: false adds none. */
let dataAtStart: string[];
const types = loadResponsesTypes();
const client = (): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0, timeout: 60_000 });

/** Every file under data_dir/responses (the store writes nothing else). */
const storedFiles = async (): Promise<string[]> => readdir(path.join(server.dir, "data", "responses")).catch(() => []);
/** Every file and folder under data_dir. */
const dataFiles = async (): Promise<string[]> => (await readdir(path.join(server.dir, "data"), { recursive: true }).catch(() => [])).sort();

before(async () => {
  const [demo, tiny] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
  upstream = await startAgentUpstream();
  server = await startHttpServer(
    configYaml({
      llama: { models: { default: localModel(demo), solo: localModel(demo, { parallel: 1 }), tiny: localModel(tiny, { ctx_size: 4096 }), up: openaiModel(upstream.baseUrl, "test-model") } },
      agents: { assistant: { temperature: 0 }, solo: { model: "solo", temperature: 0 }, talker: { model: "tiny", temperature: 0, max_tokens: 3000 }, remote: { model: "up", temperature: 0 } },
      http: { model_aliases: { "gpt-5*": "assistant" } },
    }),
  );
  dataAtStart = await dataFiles();
});

after(async () => {
  await server?.stop();
  await upstream?.close();
});

type Json = Record<string, unknown>;

/** The messages the upstream received in its n-th chat request (0-based). */
const upstreamMessages = (n: number): Json[] => ((upstream.chats()[n]?.body as { messages?: Json[] } | undefined)?.messages ?? []);

/** A request that must be refused: its status and OpenAI error body. */
async function refused(body: unknown, init: { path?: string } = {}): Promise<{ status: number; error: { code: string; param: string | null; type: string; message: string } }> {
  const reply = await postResponses(server.base, body, init);
  return { status: reply.status, error: ((await reply.json()) as { error: { code: string; param: string | null; type: string; message: string } }).error };
}

/** The text turn's exact event order: one message item with one output_text part. */
function textTurnOrder(deltas: number, last = "response.completed"): string[] {
  return [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    ...Array<string>(deltas).fill("response.output_text.delta"),
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    last,
  ];
}

describe("POST /v1/responses on the embedded engine (openai client)", () => {
  it("responses.create: the demo sentence as one message item, usage, echoed settings, every required field", async () => {
    const response = await client().responses.create({ model: "assistant", input: "Hello!", store: false, temperature: 0, metadata: { run: "1" } });
    assertResponseShape(types, response);
    assert.match(response.id, /^resp_[0-9a-f]{24}$/);
    assert.equal(response.object, "response");
    assert.equal(response.status, "completed");
    assert.equal(response.model, "assistant");
    assert.equal(response.output_text, DEMO_SENTENCE);
    assert.equal(response.output.length, 1);
    const message = response.output[0];
    assert.equal(message?.type, "message");
    assert.deepEqual(message?.type === "message" ? message.content : [], [{ type: "output_text", text: DEMO_SENTENCE, annotations: [], logprobs: [] }]);
    assert.ok((response.usage?.input_tokens ?? 0) > 0 && (response.usage?.output_tokens ?? 0) > 0);
    assert.equal(response.usage?.total_tokens, (response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0));
    assert.deepEqual(response.metadata, { run: "1" });
    assert.equal(response.temperature, 0);
    assert.equal((response as unknown as { store: boolean }).store, false);
    assert.equal(response.error, null);
    assert.equal(response.incomplete_details, null);
    assert.deepEqual(await dataFiles(), dataAtStart, "store: false writes nothing under data_dir");
  });

  it("stream: the exact event sequence, sequence numbers 0..n-1, every event typed as the pinned openai package declares it", async () => {
    const reply = await postResponses(server.base, { model: "assistant", input: "Hello!", stream: true, store: false });
    assert.equal(reply.status, 200);
    assert.match(reply.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = await readSseEvents(reply);
    const deltas = events.filter((e) => e.data.type === "response.output_text.delta");
    assert.deepEqual(events.map((e) => e.data.type), textTurnOrder(deltas.length));
    assert.deepEqual(events.map((e) => e.data.sequence_number), events.map((_, i) => i));
    for (const event of events) {
      assert.equal(event.name, event.data.type, "the SSE event name is the event's type");
      assertEventShape(types, event.data);
    }
    const added = events[2]?.data.item as { id: string };
    for (const delta of deltas) assert.deepEqual([delta.data.item_id, delta.data.output_index, delta.data.content_index], [added.id, 0, 0]);
    assert.equal(deltas.map((e) => e.data.delta).join(""), DEMO_SENTENCE);
    assert.equal(events.find((e) => e.data.type === "response.output_text.done")?.data.text, DEMO_SENTENCE);
    const completed = events.at(-1)?.data.response as { output_text: string; status: string; usage: { output_tokens: number }; id: string };
    assert.equal(completed.status, "completed");
    assert.equal(completed.output_text, DEMO_SENTENCE);
    assert.ok(completed.usage.output_tokens > 0);
    assert.equal((events[0]?.data.response as { id: string }).id, completed.id);
  });

  it("the openai client's stream: create({stream: true}) iterates the events; responses.stream().finalResponse() assembles the text", async () => {
    const stream = await client().responses.create({ model: "assistant", input: [{ role: "user", content: "Hello!" }], stream: true, store: false });
    let text = "";
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    assert.equal(text, DEMO_SENTENCE);
    assert.equal(seen.at(-1), "response.completed");
    const final = await client().responses.stream({ model: "assistant", input: "Hello!", store: false }).finalResponse();
    assert.equal(final.output_text, DEMO_SENTENCE);
    assert.equal(final.status, "completed");
  });

  it("a model name the client insists on (Codex's gpt-5-codex) reaches its agent through http.model_aliases and is echoed", async () => {
    const response = await client().responses.create({ model: "gpt-5-codex", input: "Hello!", store: false });
    assert.equal(response.model, "gpt-5-codex");
    assert.equal(response.output_text, DEMO_SENTENCE);
  });

  it("max_output_tokens: status incomplete, incomplete_details max_output_tokens (JSON and stream)", async () => {
    const response = await client().responses.create({ model: "assistant", input: "Hello!", max_output_tokens: 3, store: false });
    assert.equal(response.status, "incomplete");
    assert.deepEqual(response.incomplete_details, { reason: "max_output_tokens" });
    assert.equal(response.usage?.output_tokens, 3);
    assert.ok(DEMO_SENTENCE.startsWith(response.output_text) && response.output_text.length > 0);
    assert.equal(response.output[0]?.type === "message" ? response.output[0].status : "", "incomplete");
    const events = await readSseEvents(await postResponses(server.base, { model: "assistant", input: "Hello!", max_output_tokens: 3, stream: true, store: false }));
    const deltas = events.filter((e) => e.data.type === "response.output_text.delta").length;
    assert.deepEqual(events.map((e) => e.data.type), textTurnOrder(deltas, "response.incomplete"));
    for (const event of events) assertEventShape(types, event.data);
  });
});

describe("store, previous_response_id, retrieve, input_items, delete", () => {
  it("three turns chained by previous_response_id: the context grows, cached tokens > 0 on the embedded engine, files 0600 in a 0700 folder", async () => {
    const first = await client().responses.create({ model: "assistant", input: "My name is Ada." });
    assert.equal((first as unknown as { store: boolean }).store, true);
    const second = await client().responses.create({ model: "assistant", input: "And again.", previous_response_id: first.id });
    const third = await client().responses.create({ model: "assistant", input: "What is my name?", previous_response_id: second.id });
    assert.equal(third.previous_response_id, second.id);
    const inputs = [first, second, third].map((r) => r.usage?.input_tokens ?? 0);
    assert.ok((inputs[1] ?? 0) > (inputs[0] ?? 0) + 10 && (inputs[2] ?? 0) > (inputs[1] ?? 0) + 10, `each turn carries the ones before: ${inputs.join(" -> ")}`);
    for (const [turn, response] of [second, third].entries()) {
      const cached = response.usage?.input_tokens_details.cached_tokens ?? 0;
      assert.ok(cached >= (inputs[turn] ?? 0) && cached < (inputs[turn + 1] ?? 0), `turn ${turn + 2}: cached ${cached} of ${inputs.join(",")}`);
    }
    const files = await storedFiles();
    for (const response of [first, second, third]) assert.ok(files.includes(`${response.id}.json`), files.join(","));
    const folder = path.join(server.dir, "data", "responses");
    assert.equal((await stat(folder)).mode & 0o777, 0o700);
    assert.equal((await stat(path.join(folder, `${first.id}.json`))).mode & 0o777, 0o600);
  });

  it("the openai engine: the third turn's request to the upstream carries the first turn's input and output", async () => {
    upstream.push({ text: ["one"] }, { text: ["two"] }, { text: ["three"] });
    const before = upstream.chats().length;
    const first = await client().responses.create({ model: "remote", input: "first words", instructions: "Be brief." });
    const second = await client().responses.create({ model: "remote", input: [{ role: "user", content: [{ type: "input_text", text: "second words" }] }], previous_response_id: first.id });
    const third = await client().responses.create({ model: "remote", input: "third words", previous_response_id: second.id });
    assert.deepEqual([first.output_text, second.output_text, third.output_text], ["one", "two", "three"]);
    const sent = upstreamMessages(before + 2).map((m) => [m.role, m.content]);
    // instructions belong to the request that gave them (as OpenAI does): not carried to later turns.
    assert.deepEqual(sent.slice(1), [["user", "first words"], ["assistant", "one"], ["user", "second words"], ["assistant", "two"], ["user", "third words"]]);
    assert.equal(sent[0]?.[0], "system");
    assert.doesNotMatch(String(sent[0]?.[1]), /Be brief/);
    assert.match(String(upstreamMessages(before)[0]?.content), /Be brief\.$/);
  });

  it("retrieve returns the stored response; input_items paginate as the API does; delete removes it (then 404s naming the field)", async () => {
    const input = [
      { role: "developer" as const, content: "Answer briefly." },
      { role: "user" as const, content: "Hello!" },
      { role: "assistant" as const, content: "Hi." },
      { role: "user" as const, content: [{ type: "input_text" as const, text: "Hello again!" }] },
    ];
    const created = await client().responses.create({ model: "assistant", input });
    const got = await client().responses.retrieve(created.id);
    assertResponseShape(types, got);
    assert.deepEqual({ ...got, output_text: "" }, { ...created, output_text: "" });
    const all = await client().responses.inputItems.list(created.id, { order: "asc" });
    assert.deepEqual(all.data.map((item) => (item.type === "message" ? [item.role, item.content.map((part) => ("text" in part ? part.text : ""))] : [])), [["developer", ["Answer briefly."]], ["user", ["Hello!"]], ["assistant", ["Hi."]], ["user", ["Hello again!"]]]);
    const ids = all.data.map((item) => item.id);
    assert.equal(new Set(ids).size, 4);
    const page = (await (await fetch(`${server.base}/v1/responses/${created.id}/input_items?limit=3`)).json()) as { object: string; data: Array<{ id: string }>; first_id: string; last_id: string; has_more: boolean };
    assert.deepEqual([page.object, page.data.map((i) => i.id), page.first_id, page.last_id, page.has_more], ["list", [...ids].reverse().slice(0, 3), ids[3], ids[1], true]);
    const rest = (await (await fetch(`${server.base}/v1/responses/${created.id}/input_items?limit=3&after=${page.last_id}`)).json()) as { data: Array<{ id: string }>; has_more: boolean };
    assert.deepEqual([rest.data.map((i) => i.id), rest.has_more], [[ids[0]], false]);

    // Typed void by the SDK; the API's body (and ours) says what was deleted.
    const deleted: unknown = await client().responses.delete(created.id);
    assert.deepEqual(deleted, { id: created.id, object: "response", deleted: true });
    assert.ok(!(await storedFiles()).includes(`${created.id}.json`));
    await assert.rejects(client().responses.retrieve(created.id), (error: unknown) => error instanceof OpenAI.NotFoundError && error.param === "response_id");
    await assert.rejects(client().responses.create({ model: "assistant", input: "x", previous_response_id: created.id }), (error: unknown) => error instanceof OpenAI.NotFoundError && error.param === "previous_response_id");
    const gone = await fetch(`${server.base}/v1/responses/${created.id}`, { method: "DELETE" });
    assert.equal(gone.status, 404);
  });

  it("item_reference: an output item of a stored response is resolved; an unknown one is a 404 naming input[i].id", async () => {
    const first = await client().responses.create({ model: "remote", input: "ref words" });
    upstream.push({ text: ["ok"] });
    const before = upstream.chats().length;
    const item = first.output[0];
    assert.ok(item?.type === "message");
    await client().responses.create({ model: "remote", input: [{ role: "user", content: "ref words" }, { type: "item_reference", id: item.id }, { role: "user", content: "next" }], store: false });
    assert.deepEqual(upstreamMessages(before).slice(1).map((m) => [m.role, m.content]), [["user", "ref words"], ["assistant", first.output_text], ["user", "next"]]);
    const missing = await refused({ model: "remote", input: [{ role: "user", content: "x" }, { type: "item_reference", id: "msg_000000000000000000000000_0" }] });
    assert.deepEqual([missing.status, missing.error.code, missing.error.param], [404, "not_found", "input[1].id"]);
  });

  it("store: false with a stream writes nothing under data_dir/responses", async () => {
    const before = await storedFiles();
    const events = await readSseEvents(await postResponses(server.base, { model: "assistant", input: "Hello!", stream: true, store: false }));
    assert.equal(events.at(-1)?.data.type, "response.completed");
    assert.deepEqual(await storedFiles(), before);
  });
});

describe("function tools over the openai engine (scripted upstream)", () => {
  const execCommand = { type: "function" as const, name: "exec_command", description: "Runs a command", parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] }, strict: false };
  const namespace = { type: "namespace", name: "multi_agent_v1", description: "Agents", tools: [{ type: "function", name: "spawn_agent", parameters: { type: "object", properties: { task: { type: "string" } } } }] };
  const tools = [execCommand, namespace, { type: "web_search" }, { type: "custom", name: "apply_patch" }] as unknown as OpenAI.Responses.Tool[];

  it("a round trip as Codex makes it: function_call out, function_call_output back as a tool message, the final text", async () => {
    upstream.push({ call: { id: "call_1", name: "exec_command", arguments: { cmd: "echo hi" } } }, { text: ["The command printed hi."] });
    const before = upstream.chats().length;
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Run echo hi" }];
    const first = await client().responses.create({ model: "remote", input, tools, tool_choice: "auto", parallel_tool_calls: true, store: false });
    assertResponseShape(types, first);
    assert.equal(first.status, "completed");
    assert.deepEqual(first.output.map((item) => item.type), ["function_call"]);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    assert.deepEqual([call.call_id, call.name, JSON.parse(call.arguments), call.namespace, call.status], ["call_1", "exec_command", { cmd: "echo hi" }, undefined, "completed"]);
    assert.deepEqual((first as unknown as { local_ai: { warnings: string[] } }).local_ai.warnings, [
      'tools[2]: tool type "web_search" is not supported by this server; skipped',
      'tools[3]: tool type "custom" is not supported by this server; skipped',
    ]);
    const offered = (upstream.chats()[before]?.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    assert.deepEqual(offered, ["exec_command", "spawn_agent"]);

    const second = await client().responses.create({ model: "remote", input: [...input, call, { type: "function_call_output", call_id: "call_1", output: "hi\n" }], tools, store: false });
    assert.equal(second.output_text, "The command printed hi.");
    const sent = upstreamMessages(before + 1);
    assert.deepEqual(sent.slice(1).map((m) => m.role), ["user", "assistant", "tool"]);
    assert.deepEqual((sent[2]?.tool_calls as Json[] | undefined)?.map((c) => (c.function as Json).name), ["exec_command"]);
    assert.deepEqual([sent[3]?.tool_call_id, sent[3]?.content], ["call_1", "hi\n"]);
  });

  it("a namespaced function comes back with namespace set; streamed as item added, arguments delta and done, item done", async () => {
    upstream.push({ call: { id: "call_2", name: "spawn_agent", arguments: { task: "look" } } });
    const reply = await postResponses(server.base, { model: "remote", input: "spawn one", tools, stream: true, store: false });
    const events = await readSseEvents(reply);
    for (const event of events) assertEventShape(types, event.data);
    assert.deepEqual(events.map((e) => e.data.type), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const done = events[5]?.data.item as Json;
    assert.deepEqual([done.type, done.name, done.namespace, done.call_id, done.arguments], ["function_call", "spawn_agent", "multi_agent_v1", "call_2", JSON.stringify({ task: "look" })]);
    assert.equal(events[3]?.data.delta, JSON.stringify({ task: "look" }));
    // The call goes back with its namespace and reaches the model under the name it was offered.
    upstream.push({ text: ["spawned"] });
    const before = upstream.chats().length;
    const next = await client().responses.create({
      model: "remote",
      input: [{ role: "user", content: "spawn one" }, { type: "function_call", call_id: "call_2", name: "spawn_agent", namespace: "multi_agent_v1", arguments: "{}" }, { type: "function_call_output", call_id: "call_2", output: [{ type: "input_text", text: "agent 7" }] }],
      tools,
      store: false,
    });
    assert.equal(next.output_text, "spawned");
    assert.deepEqual(upstreamMessages(before).slice(2).map((m) => [m.role, m.role === "tool" ? m.content : ((m.tool_calls as Json[])[0]?.function as Json).name]), [["assistant", "spawn_agent"], ["tool", "agent 7"]]);
  });

  it("with previous_response_id only the function_call_output is sent: it answers the stored call", async () => {
    upstream.push({ call: { id: "call_3", name: "exec_command", arguments: { cmd: "ls" } } }, { text: ["Two files."] });
    const first = await client().responses.create({ model: "remote", input: "list files", tools });
    assert.equal(first.output[0]?.type, "function_call");
    const before = upstream.chats().length;
    const second = await client().responses.create({ model: "remote", previous_response_id: first.id, input: [{ type: "function_call_output", call_id: "call_3", output: "a\nb" }], tools });
    assert.equal(second.output_text, "Two files.");
    assert.deepEqual(upstreamMessages(before).slice(1).map((m) => [m.role, m.role === "tool" ? [m.tool_call_id, m.content] : m.content]), [["user", "list files"], ["assistant", ""], ["tool", ["call_3", "a\nb"]]]);
  });

  it("a request shaped as Codex CLI sends it streams to response.completed; only the hosted tool is reported as skipped", async () => {
    upstream.push({ text: ["Hi from the upstream."] });
    const body = {
      model: "remote",
      instructions: null,
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "You are Codex, a coding agent." }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>cwd: /tmp</environment_context>" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "say hi" }] },
      ],
      tools: [execCommand, namespace, { type: "web_search", external_web_access: false }],
      tool_choice: "auto",
      parallel_tool_calls: true,
      reasoning: { summary: "auto" },
      store: false,
      stream: true,
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "0199-codex-session",
      client_metadata: { originator: "codex_exec" },
    };
    const events = await readSseEvents(await postResponses(server.base, body));
    for (const event of events) assertEventShape(types, event.data);
    const done = events.filter((e) => e.data.type === "response.output_item.done").map((e) => e.data.item as { type: string; content?: Array<{ text: string }> });
    assert.deepEqual(done.map((item) => [item.type, item.content?.[0]?.text]), [["message", "Hi from the upstream."]]);
    const completed = events.at(-1)?.data as { type: string; response: { local_ai: { warnings: string[] }; prompt_cache_key: string } };
    assert.equal(completed.type, "response.completed");
    assert.deepEqual(completed.response.local_ai.warnings, ['tools[2]: tool type "web_search" is not supported by this server; skipped']);
    assert.equal(completed.response.prompt_cache_key, "0199-codex-session");
  });

  it("tool_choice naming a function that is not offered is a 400 naming tool_choice", async () => {
    const reply = await refused({ model: "remote", input: "x", tools: [execCommand], tool_choice: { type: "function", name: "nope" } });
    assert.deepEqual([reply.status, reply.error.param], [400, "tool_choice"]);
  });
});

describe("prompt_cache_key (embedded engine, one sequence)", () => {
  it("the key keeps the conversation's KV cache: after another conversation took the sequence, the next turn reuses all of the first", async () => {
    const turn = (key: string, input: Array<{ role: "user" | "assistant"; content: string }>): Promise<OpenAI.Responses.Response> =>
      client().responses.create({ model: "solo", input, prompt_cache_key: key, store: false });
    const first = await turn("conv-a", [{ role: "user", content: "Hello from conversation A!" }]);
    // Another conversation on the only sequence: conversation A's state leaves it (saved under its key).
    await turn("conv-b", [{ role: "user", content: "Something else entirely, conversation B." }]);
    const second = await turn("conv-a", [{ role: "user", content: "Hello from conversation A!" }, { role: "assistant", content: first.output_text }, { role: "user", content: "And again." }]);
    const cached = second.usage?.input_tokens_details.cached_tokens ?? 0;
    assert.ok(cached >= (first.usage?.input_tokens ?? Infinity), `cached ${cached} of the first turn's ${first.usage?.input_tokens} (second: ${second.usage?.input_tokens})`);
    assert.ok(cached < (second.usage?.input_tokens ?? 0));
  });
});

describe("structured output and token counts (embedded engine)", () => {
  it("text.format json_schema: the grammar makes output_text JSON that matches the schema", async () => {
    const schema = { type: "object", properties: { mood: { type: "string", enum: ["happy", "sad"] }, ok: { type: "boolean" } }, required: ["mood", "ok"], additionalProperties: false };
    const response = await client().responses.create({ model: "assistant", input: "How are you?", text: { format: { type: "json_schema", name: "mood", schema, strict: true } }, store: false });
    const parsed = JSON.parse(response.output_text) as Json;
    assert.deepEqual(Object.keys(parsed).sort(), ["mood", "ok"]);
    assert.ok(["happy", "sad"].includes(String(parsed.mood)) && typeof parsed.ok === "boolean", JSON.stringify(parsed));
    assert.equal(response.text?.format?.type, "json_schema");
  });

  it("input_tokens: counted with the model's tokenizer; more input and tools count more", async () => {
    const count = async (body: Json): Promise<number> => {
      const reply = await postResponses(server.base, body, { path: "/input_tokens" });
      assert.equal(reply.status, 200);
      const json = (await reply.json()) as { object: string; input_tokens: number };
      assert.equal(json.object, "response.input_tokens");
      return json.input_tokens;
    };
    const short = await count({ model: "assistant", input: "Hello!" });
    const longer = await count({ model: "assistant", input: "Hello! How are you today, my friend?" });
    const withTools = await count({ model: "assistant", input: "Hello!", tools: [{ type: "function", name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" } } } }] });
    assert.ok(short > 0 && longer > short && withTools > short, `${short} ${longer} ${withTools}`);
    assert.equal(await count({ model: "assistant", input: "Hello!" }), short);
  });
});

describe("refusals and cancellation", () => {
  it("a body that is not a Response request, an unknown item type, an output without its call, background: 400s naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [[1, 2], "body"],
      [{ model: "assistant", messages: [{ role: "user", content: "hi" }] }, "input"],
      [{ model: "assistant", input: 5 }, "input"],
      [{ model: "assistant", input: [{ role: "user", content: "hi" }, { type: "bogus_item" }] }, "input[1].type"],
      [{ model: "assistant", input: [{ role: "user", content: [{ type: "input_text" }] }] }, "input[0].content[0].text"],
      [{ model: "assistant", input: [{ role: "user", content: "hi" }, { type: "function_call_output", call_id: "call_x", output: "?" }] }, "input[1].call_id"],
      [{ model: "assistant", input: [{ role: "user", content: "hi" }, { type: "function_call", call_id: "call_y", name: "f", arguments: "{}" }] }, "input"],
      [{ model: "assistant", input: "hi", background: true }, "background"],
      [{ model: "assistant", input: [{ role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,AA" }] }] }, "input[0].content[0]"],
    ];
    for (const [body, param] of cases) {
      const reply = await refused(body);
      assert.deepEqual([reply.status, reply.error.type, reply.error.param], [400, "invalid_request_error", param], `${JSON.stringify(body)}: ${reply.error.message}`);
    }
    const unknownModel = await refused({ model: "o3-mini", input: "hi" });
    assert.deepEqual([unknownModel.status, unknownModel.error.code, unknownModel.error.param], [404, "model_not_found", "model"]);
  });

  it("an input longer than the context: 400 context_length_exceeded, also when streamed", async () => {
    const input = "word ".repeat(3000);
    for (const stream of [false, true]) {
      const reply = await refused({ model: "assistant", input, stream });
      assert.deepEqual([reply.status, reply.error.code, reply.error.param], [400, "context_length_exceeded", "input"], reply.error.message);
    }
  });

  it("a client that disconnects mid-stream cancels the turn, and nothing is stored", async () => {
    const storedBefore = await storedFiles();
    const controller = new AbortController();
    const reply = await postResponses(server.base, { model: "talker", input: "Hello!", stream: true }, { signal: controller.signal });
    assert.equal(reply.status, 200);
    const reader = reply.body!.getReader();
    let text = "";
    while ((text.match(/response\.output_text\.delta/g) ?? []).length < 3) {
      const { value, done } = await reader.read();
      assert.ok(!done, "the stream ended before three deltas");
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    // The turn stops and leaves /health's in_flight (a bounded poll: /health is the only signal).
    const deadline = Date.now() + 5000;
    for (;;) {
      const health = (await (await fetch(`${server.base}/health`)).json()) as { in_flight: number };
      if (health.in_flight === 0) break;
      assert.ok(Date.now() < deadline, "the turn was not cancelled");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(await storedFiles(), storedBefore);
  });
});

describe("reasoning, truncation and failures (scripted upstream)", () => {
  it("reasoning comes first as a reasoning item with reasoning_text content and summary: [] (JSON and stream)", async () => {
    upstream.push({ reasoning: ["Let me ", "think."], text: ["Four."] }, { reasoning: ["Let me ", "think."], text: ["Four."] });
    const response = await client().responses.create({ model: "remote", input: "2+2?", store: false });
    assertResponseShape(types, response);
    assert.deepEqual(response.output.map((item) => item.type), ["reasoning", "message"]);
    const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem;
    assert.deepEqual([reasoning.summary, reasoning.content], [[], [{ type: "reasoning_text", text: "Let me think." }]]);
    assert.equal(response.output_text, "Four.");
    const events = await readSseEvents(await postResponses(server.base, { model: "remote", input: "2+2?", stream: true, store: false }));
    for (const event of events) assertEventShape(types, event.data);
    assert.deepEqual(events.map((e) => e.data.type), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    assert.deepEqual(events.filter((e) => e.data.type === "response.output_item.added").map((e) => [e.data.output_index, (e.data.item as Json).type]), [[0, "reasoning"], [1, "message"]]);
    assert.equal(events[6]?.data.text, "Let me think.");
  });

  it("reasoning.effort reaches the upstream as reasoning_effort; on the embedded engine none is reported as not applied", async () => {
    upstream.push({ text: ["ok"] });
    const before = upstream.chats().length;
    await client().responses.create({ model: "remote", input: "think less", reasoning: { effort: "minimal" }, store: false });
    assert.equal((upstream.chats()[before]?.body as Json).reasoning_effort, "minimal");
    const embedded = await client().responses.create({ model: "assistant", input: "Hello!", reasoning: { effort: "none" }, store: false });
    assert.equal(embedded.output_text, DEMO_SENTENCE);
    assert.deepEqual((embedded as unknown as { local_ai: { warnings: string[] } }).local_ai.warnings, ['reasoning effort "none" is not applied by the embedded engine (no thinking switch): a model that thinks still does']);
    const bad = await refused({ model: "assistant", input: "x", reasoning: { effort: "extreme" } });
    assert.deepEqual([bad.status, bad.error.param], [400, "reasoning.effort"]);
  });

  it("a turn that fails after the stream started ends with response.failed carrying an error, never a cut stream", async () => {
    upstream.push({ cut: ["Partial "] });
    const events = await readSseEvents(await postResponses(server.base, { model: "remote", input: "fail please", stream: true }));
    for (const event of events) assertEventShape(types, event.data);
    const last = events.at(-1)?.data;
    assert.equal(last?.type, "response.failed");
    const failed = last?.response as { status: string; error: { code: string; message: string } | null; output: Array<{ status: string }> };
    assert.equal(failed.status, "failed");
    assert.equal(failed.error?.code, "server_error");
    assert.ok((failed.error?.message ?? "").length > 0);
    assert.deepEqual(failed.output.map((item) => item.status), ["incomplete"], JSON.stringify(events.map((e) => e.data.type)) + JSON.stringify(failed));
    assert.deepEqual(events.map((e) => e.data.sequence_number), events.map((_, i) => i));
  });
});

describe("truncation (embedded engine, 2048-token context)", () => {
  // History that cannot fit with the new turn: five long exchanges before a short question.
  const long = "word ".repeat(350);
  const input = [...Array.from({ length: 5 }, () => [{ role: "user", content: long }, { role: "assistant", content: long }]).flat(), { role: "user", content: "Hello!" }];

  it("disabled (the default): a conversation that cannot fit is a 400 context_length_exceeded", async () => {
    const reply = await refused({ model: "assistant", input, store: false });
    assert.deepEqual([reply.status, reply.error.code, reply.error.param], [400, "context_length_exceeded", "input"], reply.error.message);
  });

  it("auto: the oldest history is trimmed and the turn answers, saying so in local_ai.warnings", async () => {
    const response = await client().responses.create({ model: "assistant", input: input as OpenAI.Responses.ResponseInput, truncation: "auto", store: false });
    assert.equal(response.output_text, DEMO_SENTENCE);
    assert.equal(response.truncation, "auto");
    assert.ok((response as unknown as { local_ai: { warnings: string[] } }).local_ai.warnings.some((w) => /^trimmed the \d+ oldest messages/.test(w)));
  });
});
