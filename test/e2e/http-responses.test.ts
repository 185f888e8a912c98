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
const types = loadResponsesTypes();
const client = (): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0, timeout: 60_000 });

/** Every file under data_dir/responses (the store writes nothing else). */
const storedFiles = async (): Promise<string[]> => readdir(path.join(server.dir, "data", "responses")).catch(() => []);

before(async () => {
  const [demo, tiny] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
  upstream = await startAgentUpstream();
  server = await startHttpServer(
    configYaml({
      llama: { models: { default: localModel(demo), tiny: localModel(tiny, { ctx_size: 4096 }), up: openaiModel(upstream.baseUrl, "test-model") } },
      agents: { assistant: { temperature: 0 }, talker: { model: "tiny", temperature: 0, max_tokens: 3000 }, remote: { model: "up", temperature: 0 } },
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
    assert.deepEqual(await storedFiles(), [], "store: false writes nothing");
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
