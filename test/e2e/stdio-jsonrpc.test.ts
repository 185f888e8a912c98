// serve-stdio --protocol jsonrpc on the built CLI: seed 003's lesson case by case, a real chat on
// the generated demo model with its events as `$/event` notifications, cancellation both ways,
// and the vscode-jsonrpc client library driving it.
import assert from "node:assert/strict";
import path from "node:path";
import { before, describe, it } from "node:test";
import { CancellationTokenSource, ResponseError, createMessageConnection } from "vscode-jsonrpc/node";
import { CliProcess } from "../helpers/cli-process.js";
import { NdjsonMessageReader, NdjsonMessageWriter } from "../helpers/ndjson-rpc-transport.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

type Json = Record<string, unknown>;

let demoPath = "";
let tinyPath = "";

before(async () => {
  [demoPath, tinyPath] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
});

/** `assistant` answers the demo sentence; `talker` (tiny model) never stops by itself. */
async function serve(extra: string[] = []): Promise<{ proc: CliProcess; dir: string }> {
  const gone = { gone: { path: path.join("/nonexistent", "model.gguf") } };
  const { dir, configPath } = await tempConfig(`stdio:\n  max_line_bytes: 4096\n${agentsYaml(demoPath, tinyPath, gone)}`);
  return { proc: new CliProcess(["serve-stdio", "--protocol", "jsonrpc", "--config", configPath, ...extra], { cwd: dir }), dir };
}

const answerTo = (id: unknown) => (m: Json): boolean => !Array.isArray(m) && m.id === id && ("result" in m || "error" in m);
const eventsFor = (proc: CliProcess, id: unknown): Json[] =>
  proc.messages.filter((m) => (m as Json).method === "$/event" && ((m as Json).params as Json).request_id === id).map((m) => (m as Json).params as Json);

/** Every stdout line is one JSON-RPC 2.0 message (or a batch of them): nothing else, ever. */
function assertAllJsonRpc(proc: CliProcess): void {
  assert.ok(proc.stdout === "" || proc.stdout.endsWith("\n"));
  for (const line of proc.rawLines) {
    const value = JSON.parse(line) as Json | Json[];
    for (const message of Array.isArray(value) ? value : [value]) assert.equal(message.jsonrpc, "2.0", line);
  }
}

describe("serve-stdio --protocol jsonrpc: seed 003 through the built CLI", () => {
  it("answers each case with the spec's envelope and code, never answers notifications, and keeps reading", async () => {
    const { proc } = await serve();
    const exchange = async (line: string, id: unknown): Promise<Json> => {
      proc.send(line);
      return (await proc.waitFor(answerTo(id)));
    };
    // A request and its response, byte for byte.
    await exchange('{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}', 7);
    assert.ok(proc.rawLines.includes('{"jsonrpc":"2.0","id":7,"result":{"status":"ok"}}'), proc.stdout);
    // -32700 with id null, and the stream is not poisoned: the next line is served.
    proc.send('{"jsonrpc":"2.0","id":8,"method":"ping"');
    const parse = (await proc.waitFor(((m: Json) => (m.error as Json | undefined)?.code === -32700))) as Json;
    assert.equal(parse.id, null);
    assert.deepEqual(Object.keys(parse), ["jsonrpc", "id", "error"]);
    assert.equal((await exchange('{"jsonrpc":"2.0","id":"s","method":"ping"}', "s")).result !== undefined, true);
    // -32600: a missing or non-string method (with the id), a non-object and an empty batch (id null).
    assert.equal(((await exchange('{"jsonrpc":"2.0","id":9}', 9)).error as Json).code, -32600);
    assert.equal(((await exchange('{"jsonrpc":"2.0","id":10,"method":42}', 10)).error as Json).code, -32600);
    assert.equal(((await exchange('{"jsonrpc":"1.0","id":11,"method":"ping"}', 11)).error as Json).code, -32600);
    const before = proc.messages.length;
    proc.send('"just a string"');
    proc.send("[]");
    await proc.waitFor(() => proc.messages.length >= before + 2);
    for (const message of proc.messages.slice(before, before + 2)) {
      assert.ok(!Array.isArray(message), "an empty batch is answered by one error object, not an array");
      assert.equal(message.id, null);
      assert.equal((message.error as Json).code, -32600);
    }
    // -32601 method not found, -32602 invalid params with the zod issues in data.
    const missing = await exchange('{"jsonrpc":"2.0","id":12,"method":"no_such_method"}', 12);
    assert.equal((missing.error as Json).code, -32601);
    assert.equal(((missing.error as Json).data as Json).code, "unknown_method");
    const invalid = await exchange('{"jsonrpc":"2.0","id":13,"method":"plan","params":{"model":5}}', 13);
    assert.equal((invalid.error as Json).code, -32602);
    assert.deepEqual(((invalid.error as Json).data as Json).issues, [{ param: "model", message: "must be a string (found 5)" }]);
    // Notifications are never answered, not even a failing or unknown one; a ping after them is
    // the only answer that comes.
    const quiet = proc.messages.length;
    proc.send('{"jsonrpc":"2.0","method":"ping"}');
    proc.send('{"jsonrpc":"2.0","method":"no_such_method"}');
    proc.send('{"jsonrpc":"2.0","method":"plan","params":{"model":5}}');
    proc.send('[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"nope"}]');
    await exchange('{"jsonrpc":"2.0","id":"barrier","method":"ping"}', "barrier");
    // Batch: one array out, one response per entry with an id (invalid entries too), none for notifications.
    proc.send('[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"nope"},1]');
    const batch = (await proc.waitFor(((m: unknown) => Array.isArray(m)))) as unknown as Json[];
    assert.equal(batch.length, 3);
    assert.deepEqual(batch[0], { jsonrpc: "2.0", id: "b1", result: { status: "ok" } });
    assert.equal(batch[1]?.id, "b2");
    assert.equal((batch[1]?.error as Json).code, -32601);
    assert.equal(batch[2]?.id, null);
    assert.equal((batch[2]?.error as Json).code, -32600);
    assert.equal(proc.messages.length, quiet + 2, `only the barrier and the batch were answered: ${JSON.stringify(proc.messages.slice(quiet))}`);
    // Domain errors: -32000..-32099 with the v1 code name in data.code.
    const gone = await exchange('{"jsonrpc":"2.0","id":14,"method":"plan","params":{"model":"gone"}}', 14);
    assert.equal((gone.error as Json).code, -32004);
    assert.equal(((gone.error as Json).data as Json).code, "model_missing");
    // A line over the cap is discarded unread and answered; reading goes on.
    proc.send(`{"jsonrpc":"2.0","id":15,"method":"ping","params":{"pad":"${"x".repeat(5000)}"}}`);
    const overflow = (await proc.waitFor(((m: Json) => (m.error as Json | undefined)?.message?.toString().includes("exceeds the limit") === true))) as Json;
    assert.equal(overflow.id, null);
    assert.equal((overflow.error as Json).code, -32600);
    const shutdown = await exchange('{"jsonrpc":"2.0","id":"bye","method":"shutdown"}', "bye");
    assert.deepEqual(shutdown, { jsonrpc: "2.0", id: "bye", result: { status: "ok" } });
    assert.equal((await proc.exited).code, 0);
    assertAllJsonRpc(proc);
  });

  it("initialize says which wire and notifications this server speaks; numeric and string ids keep their type", async () => {
    const { proc } = await serve();
    proc.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocol_versions: [1] } });
    proc.send({ jsonrpc: "2.0", id: "1", method: "ping" });
    const init = (await proc.waitFor(answerTo(1))) as Json;
    const capabilities = (init.result as Json).capabilities as Json;
    assert.equal(capabilities.wire, "jsonrpc");
    assert.equal(capabilities.event_notification, "$/event");
    assert.equal(capabilities.cancel_notification, "$/cancelRequest");
    assert.deepEqual(capabilities.methods, ["initialize", "ping", "doctor", "plan", "chat", "cancel", "warm_up", "pull", "unload", "ps", "metrics", "mcp_prompts", "mcp_resources", "tokenize", "detokenize", "shutdown"]);
    assert.deepEqual(await proc.waitFor(answerTo("1") as never), { jsonrpc: "2.0", id: "1", result: { status: "ok" } });
    proc.endInput();
    assert.equal((await proc.exited).code, 0);
    assertAllJsonRpc(proc);
  });
});

describe("serve-stdio --protocol jsonrpc: chat on the embedded engine", () => {
  it("streams the AgentLoop events as $/event notifications before the response", async () => {
    const { proc } = await serve();
    proc.send({ jsonrpc: "2.0", id: "c1", method: "chat", params: { session_id: "s1", input: "Hello!" } });
    const reply = (await proc.waitFor(answerTo("c1"), 30_000)) as Json;
    const result = reply.result as { response: string; session_id: string; trace_id: string; warnings: string[] };
    assert.equal(result.response, DEMO_SENTENCE);
    const events = eventsFor(proc, "c1");
    // The first chat loads the model: model_load (loading, its progress, loaded) before the memory step.
    const names = events.map((e) => e.event);
    assert.deepEqual(names.filter((n, i) => n !== "llm_chunk" && !(n === "model_load" && names[i - 1] === "model_load")), ["run_start", "model_load", "memory_start", "llm_start", "usage", "llm_done", "final"]);
    assert.deepEqual(events[0], { request_id: "c1", event: "run_start", user_input: "Hello!", trace_id: result.trace_id, session_id: "s1", agent: "assistant" });
    assert.equal(events.filter((e) => e.event === "llm_chunk").map((e) => e.delta).join(""), DEMO_SENTENCE);
    const lastEvent = proc.messages.findLastIndex((m) => (m as Json).method === "$/event");
    assert.ok(lastEvent < proc.messages.indexOf(reply as never), "every event precedes the response");
    // A batch holding a chat and a ping: events stream at once, both answers come in one array.
    proc.send([
      { jsonrpc: "2.0", id: "bc", method: "chat", params: { session_id: "s2", input: "Hi" } },
      { jsonrpc: "2.0", id: "bp", method: "ping" },
    ]);
    const batch = (await proc.waitFor(((m: unknown) => Array.isArray(m)), 30_000)) as unknown as Json[];
    assert.deepEqual(batch.map((m) => m.id), ["bc", "bp"]);
    assert.equal((batch[0]?.result as Json).response, DEMO_SENTENCE);
    assert.ok(eventsFor(proc, "bc").length > 5);
    proc.send({ jsonrpc: "2.0", id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assertAllJsonRpc(proc);
  });

  it("$/cancelRequest and the cancel method both end a chat with the cancelled domain error", async () => {
    const { proc } = await serve();
    proc.send({ jsonrpc: "2.0", id: 1, method: "chat", params: { session_id: "k1", agent: "talker", input: "go on" } });
    await proc.waitFor(((m: Json) => m.method === "$/event" && (m.params as Json).request_id === 1 && (m.params as Json).event === "llm_chunk"), 30_000);
    proc.send({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id: 1 } });
    const cancelled = (await proc.waitFor(answerTo(1), 10_000)) as Json;
    assert.equal((cancelled.error as Json).code, -32006);
    assert.deepEqual((cancelled.error as Json).data, { code: "cancelled" });
    assert.match(String((cancelled.error as Json).message), /cancelled/i);
    const at = proc.messages.indexOf(cancelled as never);
    assert.deepEqual(proc.messages.slice(at + 1).filter((m) => ((m as Json).params as Json | undefined)?.request_id === 1), [], "nothing for the request after its answer");

    proc.send({ jsonrpc: "2.0", id: 2, method: "chat", params: { session_id: "k2", agent: "talker", input: "go on" } });
    await proc.waitFor(((m: Json) => m.method === "$/event" && (m.params as Json).request_id === 2 && (m.params as Json).event === "llm_chunk"), 30_000);
    proc.send({ jsonrpc: "2.0", id: 3, method: "cancel", params: { request_id: 2 } });
    assert.deepEqual(await proc.waitFor(answerTo(3) as never), { jsonrpc: "2.0", id: 3, result: { status: "ok" } });
    assert.equal((((await proc.waitFor(answerTo(2) as never, 10_000)) as Json).error as Json).code, -32006);
    // A cancel for an id that is not in flight is a notification about nothing: no answer, no harm.
    proc.send({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id: 99 } });
    proc.send({ jsonrpc: "2.0", id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.equal(proc.messages.filter((m) => (m as Json).id === 99).length, 0);
    assertAllJsonRpc(proc);
  });
});

describe("serve-stdio --protocol jsonrpc with vscode-jsonrpc as the client", () => {
  it("drives a chat (events as notifications, typed result) and a cancellation through the library", async () => {
    const { proc } = await serve();
    const connection = createMessageConnection(new NdjsonMessageReader(proc.child.stdout), new NdjsonMessageWriter(proc.child.stdin));
    const events: Json[] = [];
    connection.onNotification("$/event", (params: Json) => void events.push(params));
    connection.listen();
    try {
      const pong = await connection.sendRequest<{ status: string }>("ping", {});
      assert.deepEqual(pong, { status: "ok" });
      const result = await connection.sendRequest<{ response: string; session_id: string }>("chat", { session_id: "lib", input: "Hello!" });
      assert.equal(result.response, DEMO_SENTENCE);
      assert.equal(result.session_id, "lib");
      assert.equal(events.filter((e) => e.event === "llm_chunk").map((e) => e.delta).join(""), DEMO_SENTENCE);
      assert.equal(events.at(-1)?.event, "final");

      // The library sends $/cancelRequest when its token is cancelled; the request rejects with our code.
      const source = new CancellationTokenSource();
      const firstChunk = new Promise<void>((resolve) => connection.onNotification("$/event", (params: Json) => (params.event === "llm_chunk" ? resolve() : undefined)));
      const long = connection.sendRequest("chat", { session_id: "lib2", agent: "talker", input: "go on" }, source.token);
      await firstChunk;
      source.cancel();
      await assert.rejects(long, (error: unknown) => {
        assert.ok(error instanceof ResponseError);
        assert.equal(error.code, -32006);
        assert.deepEqual(error.data, { code: "cancelled" });
        return true;
      });
      // A domain error arrives as a ResponseError with the v1 code name in data.
      await assert.rejects(connection.sendRequest("plan", { model: "gone" }), (error: unknown) => error instanceof ResponseError && error.code === -32004);
      assert.deepEqual(await connection.sendRequest("shutdown"), { status: "ok" });
    } finally {
      connection.dispose();
    }
    assert.equal((await proc.exited).code, 0);
  });
});
