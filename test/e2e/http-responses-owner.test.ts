// Stored responses belong to the key that stored them (issue 33, point 2), through the built CLI's
// serve-http with http.keys and the embedded engine (demo model): to another key a response
// answers every route (GET, input_items, DELETE, previous_response_id, item_reference,
// input_tokens) exactly as an id that never existed; the bearer token sees every response; output
// item ids do not carry the response id; owners survive a restart; a response stored before owners
// is the operator's alone.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { cp, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";

const ADMIN = "operator-bearer-token-4f1c";
const KA = "alpha-key-token-9d27";
const KB = "beta-key-token-3b85";
const PIN = "My secret PIN is 4242";

type Json = Record<string, unknown>;
interface Reply {
  status: number;
  body: Json;
}

let demo: string;
let server: HttpServer;
/** alpha's stored response (its first turn). */
let stored: { id: string; output: Array<{ id: string; type: string }> };
/** alpha's input item ids in that response (GET input_items). */
let inputItemIds: string[];

const config = (): string =>
  configYaml({
    llama: { models: { default: localModel(demo) } },
    agents: { assistant: { temperature: 0, max_tokens: 4 } },
    http: {
      keys: [
        { name: "alpha", token: KA },
        { name: "beta", token: KB },
      ],
    },
  });
const start = (prepare?: (dir: string) => Promise<void>): Promise<HttpServer> => startHttpServer(config(), [], { LOCAL_AI_TOKEN: ADMIN }, prepare);

/** One request with `token`; the error body without its request_id (each request has its own). */
async function call(token: string, method: string, route: string, body?: Json): Promise<Reply> {
  const reply = await fetch(`${server.base}${route}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await reply.json()) as Json;
  const error = json.error as Json | undefined;
  if (reply.status >= 400 && error !== undefined) {
    assert.equal(error.request_id, reply.headers.get("x-request-id"));
    delete error.request_id;
  }
  return { status: reply.status, body: json };
}

const freshId = (): string => `resp_${randomBytes(12).toString("hex")}`;
const freshItemId = (): string => `msg_${randomBytes(12).toString("hex")}_0`;

/** Every route that names a stored response or item, for `id` (a response) and `itemId` (one of its items). */
function routes(id: string, itemId: string): Array<[string, (token: string) => Promise<Reply>]> {
  const next = { model: "assistant", previous_response_id: id, input: "and now?", max_output_tokens: 4 };
  const reference = { model: "assistant", input: [{ role: "user", content: "x" }, { type: "item_reference", id: itemId }], max_output_tokens: 4 };
  return [
    ["GET /v1/responses/{id}", (token) => call(token, "GET", `/v1/responses/${id}`)],
    ["GET /v1/responses/{id}/input_items", (token) => call(token, "GET", `/v1/responses/${id}/input_items`)],
    ["POST /v1/responses previous_response_id", (token) => call(token, "POST", "/v1/responses", next)],
    ["POST /v1/responses item_reference", (token) => call(token, "POST", "/v1/responses", reference)],
    ["POST /v1/responses/input_tokens previous_response_id", (token) => call(token, "POST", "/v1/responses/input_tokens", next)],
    ["POST /v1/responses/input_tokens item_reference", (token) => call(token, "POST", "/v1/responses/input_tokens", reference)],
    ["DELETE /v1/responses/{id}", (token) => call(token, "DELETE", `/v1/responses/${id}`)],
  ];
}

/** `token` gets on every route for (id, itemId) exactly what it gets for an id and an item id that never existed. */
async function assertUnknownTo(token: string, id: string, itemId: string): Promise<void> {
  const [unknownId, unknownItem] = [freshId(), freshItemId()];
  const named = routes(id, itemId);
  const unknown = routes(unknownId, unknownItem);
  for (const [n, [route, send]] of named.entries()) {
    const got = await send(token);
    const expected = await unknown[n]![1](token);
    assert.equal(expected.status, 404, `${route}: an unknown id is a 404`);
    const bare = (reply: Reply, ...ids: string[]): string => ids.reduce((text, one) => text.replaceAll(one, "<id>"), JSON.stringify(reply.body));
    assert.deepEqual([got.status, bare(got, id, itemId)], [404, bare(expected, unknownId, unknownItem)], `${route}: as for an unknown id`);
  }
}

before(async () => {
  demo = await ensureFixture("demo");
  server = await start();
  const first = await call(KA, "POST", "/v1/responses", { model: "assistant", input: PIN });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  stored = first.body as typeof stored;
  const items = await call(KA, "GET", `/v1/responses/${stored.id}/input_items`);
  inputItemIds = (items.body.data as Array<{ id: string }>).map((item) => item.id);
});

after(async () => {
  await server?.stop();
});

describe("stored responses belong to the key that stored them", () => {
  it("output and input item ids do not carry the response id's hex", () => {
    const hex = stored.id.slice("resp_".length);
    assert.ok(stored.output.length > 0 && inputItemIds.length === 1);
    for (const itemId of [...stored.output.map((item) => item.id), ...inputItemIds]) {
      assert.match(itemId, /^(msg|in)_[0-9a-f]{24}_\d+$/);
      assert.ok(!itemId.includes(hex), `${itemId} carries the hex of ${stored.id}`);
    }
  });

  it("to another key, every route answers as for an id that never existed (404, same body); nothing is deleted", async () => {
    await assertUnknownTo(KB, stored.id, stored.output[0]!.id);
    await assertUnknownTo(KB, stored.id, inputItemIds[0]!);
    const own = await call(KA, "GET", `/v1/responses/${stored.id}/input_items`);
    assert.equal(own.status, 200, "beta's DELETE removed nothing");
    assert.match(JSON.stringify(own.body), /My secret PIN is 4242/);
  });

  it("the owner and the bearer token use it on every route", async () => {
    for (const token of [KA, ADMIN]) {
      const got = await call(token, "GET", `/v1/responses/${stored.id}`);
      assert.deepEqual([got.status, got.body.id], [200, stored.id]);
      const listed = await call(token, "GET", `/v1/responses/${stored.id}/input_items`);
      assert.match(JSON.stringify(listed.body), /My secret PIN is 4242/);
      for (const [route, send] of routes(stored.id, stored.output[0]!.id).slice(2, 6)) {
        const reply = await send(token);
        assert.equal(reply.status, 200, `${route}: ${JSON.stringify(reply.body)}`);
      }
    }
  });

  it("the owner survives a restart (the file names the key, never a token); a response stored before owners is the operator's alone", async () => {
    const folder = path.join(server.dir, "data", "responses");
    const files = await readdir(folder);
    for (const file of files) {
      const text = await readFile(path.join(folder, file), "utf8");
      for (const token of [ADMIN, KA, KB]) assert.ok(!text.includes(token), `a token in ${file}`);
    }
    assert.equal(JSON.parse(await readFile(path.join(folder, files.find((file) => file.startsWith(stored.id))!), "utf8")).owner, "alpha");
    await server.stop();
    // As the code before owners stored one: version 1, no owner, item ids on the id's hex.
    const oldHex = randomBytes(12).toString("hex");
    const oldRecord = {
      version: 1,
      response: { id: `resp_${oldHex}`, object: "response", status: "completed", output: [{ type: "message", id: `msg_${oldHex}_0`, role: "assistant", status: "completed", content: [{ type: "output_text", text: "old", annotations: [], logprobs: [] }] }] },
      input_items: [{ type: "message", id: `in_${oldHex}_0`, role: "user", content: [{ type: "input_text", text: "old secret" }], status: "completed" }],
      context: [{ role: "user", content: "old secret" }, { role: "assistant", content: "old" }],
      cache_key: `responses/resp_${oldHex}`,
    };
    server = await start(async (dir) => {
      await cp(path.join(folder, ".."), path.join(dir, "data"), { recursive: true, preserveTimestamps: true });
      await writeFile(path.join(dir, "data", "responses", `resp_${oldHex}.json`), JSON.stringify(oldRecord), { mode: 0o600 });
    });
    await assertUnknownTo(KB, stored.id, stored.output[0]!.id);
    assert.equal((await call(KA, "GET", `/v1/responses/${stored.id}`)).status, 200);
    const reference = { model: "assistant", input: [{ role: "user", content: "x" }, { type: "item_reference", id: stored.output[0]!.id }], max_output_tokens: 4 };
    assert.equal((await call(KA, "POST", "/v1/responses/input_tokens", reference)).status, 200, "item ids find their response after a restart");
    await assertUnknownTo(KA, `resp_${oldHex}`, `msg_${oldHex}_0`);
    const old = await call(ADMIN, "GET", `/v1/responses/resp_${oldHex}`);
    assert.deepEqual([old.status, old.body.id], [200, `resp_${oldHex}`]);
    const oldReference = { model: "assistant", input: [{ role: "user", content: "x" }, { type: "item_reference", id: `in_${oldHex}_0` }] };
    assert.equal((await call(ADMIN, "POST", "/v1/responses/input_tokens", oldReference)).status, 200);
    assert.equal((await call(ADMIN, "DELETE", `/v1/responses/${stored.id}`)).status, 200, "the operator may delete any response");
    assert.equal((await call(KA, "GET", `/v1/responses/${stored.id}`)).status, 404);
  });
});
