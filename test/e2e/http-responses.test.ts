// POST /v1/responses through the built CLI with the official openai client (pinned 6.30.1) on the
// embedded engine (demo model): text turns, the exact event stream checked against the pinned
// package's types, store / previous_response_id, prompt_cache_key, structured output, refusals.
// The exact tool and reasoning behaviour is in http-responses-upstream.test.ts (scripted upstream).
import assert from "node:assert/strict";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { postResponses, readSseEvents, refusedResponse } from "../helpers/responses-sse.js";
import { assertEventShape, assertResponseShape, loadResponsesTypes } from "../helpers/responses-types.js";

let server: HttpServer;
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
  server = await startHttpServer(
    configYaml({
      llama: { models: { default: localModel(demo), solo: localModel(demo, { parallel: 1 }), tiny: localModel(tiny, { ctx_size: 4096 }) } },
      agents: { assistant: { temperature: 0 }, solo: { model: "solo", temperature: 0 }, talker: { model: "tiny", temperature: 0, max_tokens: 3000 } },
      http: { model_aliases: { "gpt-5*": "assistant" } },
    }),
  );
  dataAtStart = await dataFiles();
});

after(async () => {
  await server?.stop();
});

type Json = Record<string, unknown>;

const refused = (body: unknown) => refusedResponse(server.base, body);

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
    // `<id>.<item key>.json`: the name carries the key of the response's item ids.
    const fileOf = (id: string): string | undefined => files.find((file) => new RegExp(`^${id}\\.[0-9a-f]{24}\\.json$`).test(file));
    for (const response of [first, second, third]) assert.ok(fileOf(response.id) !== undefined, files.join(","));
    const folder = path.join(server.dir, "data", "responses");
    assert.equal((await stat(folder)).mode & 0o777, 0o700);
    assert.equal((await stat(path.join(folder, fileOf(first.id)!))).mode & 0o777, 0o600);
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
    assert.ok(!(await storedFiles()).some((file) => file.startsWith(`${created.id}.`)));
    await assert.rejects(client().responses.retrieve(created.id), (error: unknown) => error instanceof OpenAI.NotFoundError && error.param === "response_id");
    await assert.rejects(client().responses.create({ model: "assistant", input: "x", previous_response_id: created.id }), (error: unknown) => error instanceof OpenAI.NotFoundError && error.param === "previous_response_id");
    const gone = await fetch(`${server.base}/v1/responses/${created.id}`, { method: "DELETE" });
    assert.equal(gone.status, 404);
  });


  it("store: false with a stream writes nothing under data_dir/responses", async () => {
    const before = await storedFiles();
    const events = await readSseEvents(await postResponses(server.base, { model: "assistant", input: "Hello!", stream: true, store: false }));
    assert.equal(events.at(-1)?.data.type, "response.completed");
    assert.deepEqual(await storedFiles(), before);
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

  it("input_tokens: the prompt the request would evaluate, with the model's tokenizer and chat template; more input and tools count more", async () => {
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
    // Exact: the prompt the same request evaluates (system prompt and chat template included).
    const ran = await client().responses.create({ model: "assistant", input: "Hello!", store: false, max_output_tokens: 4 });
    assert.equal(short, ran.usage?.input_tokens);
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
      // The embedded engine's grammar cannot be combined with functions: named in this API's terms.
      [{ model: "assistant", input: "hi", tools: [{ type: "function", name: "f", parameters: { type: "object" } }], text: { format: { type: "json_schema", name: "x", schema: { type: "object" } } } }, "text.format"],
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
