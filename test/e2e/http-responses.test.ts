// POST /v1/responses through the built CLI with the official openai client (pinned 6.30.1): text
// turns on the embedded engine (demo model), the exact event stream checked against the pinned
// package's types, structured output, store / previous_response_id, and refusals.
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { postResponses, readSseEvents } from "../helpers/responses-sse.js";
import { assertEventShape, assertResponseShape, loadResponsesTypes } from "../helpers/responses-types.js";

let server: HttpServer;
const types = loadResponsesTypes();
const client = (): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0, timeout: 60_000 });

/** Every file under data_dir/responses (the store writes nothing else). */
const storedFiles = async (): Promise<string[]> => readdir(path.join(server.dir, "data", "responses")).catch(() => []);

before(async () => {
  const demo = await ensureFixture("demo");
  server = await startHttpServer(configYaml({ llama: { models: { default: localModel(demo) } }, agents: { assistant: { temperature: 0 } } }));
});

after(async () => {
  await server?.stop();
});

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
