// POST /v1/responses over the openai engine and a scripted upstream (test/helpers/openai-agent-upstream.ts),
// so that what the model does is exact: function tools and namespaces (Codex's round trip), a
// stored conversation reaching the upstream, item_reference, reasoning items, reasoning.effort,
// and a turn that fails mid-stream. Every event is checked against the pinned openai types.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { postResponses, readSseEvents, refusedResponse } from "../helpers/responses-sse.js";
import { assertEventShape, assertResponseShape, loadResponsesTypes } from "../helpers/responses-types.js";

let server: HttpServer;
let upstream: AgentUpstream;
const types = loadResponsesTypes();
const client = (): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0, timeout: 60_000 });

before(async () => {
  const demo = await ensureFixture("demo");
  upstream = await startAgentUpstream();
  server = await startHttpServer(
    configYaml({
      llama: { models: { default: localModel(demo), up: openaiModel(upstream.baseUrl, "test-model") } },
      agents: { assistant: { temperature: 0 }, remote: { model: "up", temperature: 0 } },
    }),
  );
});

after(async () => {
  await server?.stop();
  await upstream?.close();
});

type Json = Record<string, unknown>;

/** The messages the upstream received in its n-th chat request (0-based). */
const upstreamMessages = (n: number): Json[] => ((upstream.chats()[n]?.body as { messages?: Json[] } | undefined)?.messages ?? []);

const refused = (body: unknown) => refusedResponse(server.base, body);

describe("store and previous_response_id over the openai engine", () => {
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

  it("tools sent as an additional_tools input item (Codex with its default model) are offered; custom tools are skipped with a warning", async () => {
    upstream.push({ call: { id: "call_9", name: "exec_command", arguments: { cmd: "ls" } } });
    const before = upstream.chats().length;
    const withCustom = { ...namespace, tools: [...namespace.tools, { type: "custom", name: "exec", format: { type: "grammar" } }] };
    const body = {
      model: "remote",
      input: [
        { type: "additional_tools", role: "developer", tools: [execCommand, withCustom] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "list the files" }] },
      ],
      tool_choice: "auto",
      store: false,
    };
    const response = await fetch(`${server.base}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    assert.equal(response.status, 200);
    const json = (await response.json()) as { output: Array<{ type: string; name?: string }>; local_ai: { warnings: string[] } };
    assert.deepEqual(json.output.map((item) => [item.type, item.name]), [["function_call", "exec_command"]]);
    assert.deepEqual(json.local_ai.warnings, ['input[0].tools[1].tools[1]: tool type "custom" is not supported by this server; skipped']);
    const offered = (upstream.chats()[before]?.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    assert.deepEqual(offered, ["exec_command", "spawn_agent"]);
    // The item carries tools, not conversation: the upstream sees the user message only.
    assert.deepEqual(upstreamMessages(before).slice(1).map((m) => [m.role, m.content]), [["user", "list the files"]]);
  });

  it("tool_choice naming a function that is not offered is a 400 naming tool_choice", async () => {
    const reply = await refused({ model: "remote", input: "x", tools: [execCommand], tool_choice: { type: "function", name: "nope" } });
    assert.deepEqual([reply.status, reply.error.param], [400, "tool_choice"]);
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
