// `model_load` events for every load a request triggers (not only a wait for memory), on the built
// CLI's serve-stdio with a real embedded model: a first chat hears `loading` (then its progress, as
// node-llama-cpp reports it) and `loaded` before the model answers; a chat on the loaded model
// hears nothing; `warm_up` of another model streams the same states. Over HTTP, a stream that
// waits for memory keeps its connection alive.
import assert from "node:assert/strict";
import { rm, writeFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { tempConfig } from "../helpers/temp-config.js";

const LOAD_MS = 60_000;

describe("model_load events on a first load (serve-stdio, built CLI, embedded engine)", () => {
  let proc: CliProcess;
  let dir = "";

  before(async () => {
    const tiny = await ensureFixture("tiny", { seed: 3 });
    const created = await tempConfig();
    dir = created.dir;
    const settings = { ctx_size: 1024, parallel: 1, gpu_layers: 0 };
    await writeFile(
      created.configPath,
      configYaml({
        app: { data_dir: "./data" },
        llama: { models: { first: localModel(tiny, settings), second: localModel(tiny, settings) } },
        agents: { a: { model: "first", temperature: 0, max_tokens: 4, memory: false }, b: { model: "second", temperature: 0, max_tokens: 4, memory: false } },
      }),
    );
    proc = new CliProcess(["serve-stdio", "--config", created.configPath], { cwd: dir });
  });
  after(async () => {
    proc.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  });

  const loadEvents = (id: string): WireMessage[] => proc.messages.filter((message) => message.id === id && message.event === "model_load");
  /** The states in order, the progress reports (loading with `progress`) folded into one entry. */
  const states = (events: WireMessage[]): string[] =>
    events.map((event) => (event.progress === undefined ? String(event.state) : "progress")).filter((state, index, all) => state !== "progress" || all[index - 1] !== "progress");

  it("a first chat hears loading, then loaded, before the model's first step; the next chat hears nothing", async () => {
    const reply = await proc.request({ id: "c1", method: "chat", params: { agent: "a", input: "hello" } }, LOAD_MS);
    assert.equal(reply.type, "result", JSON.stringify(reply));
    const events = loadEvents("c1");
    assert.deepEqual(events[0], { id: "c1", type: "event", event: "model_load", step: 0, model: "first", state: "loading" });
    assert.deepEqual(events.at(-1), { id: "c1", type: "event", event: "model_load", step: 0, model: "first", state: "loaded" });
    assert.ok(["loading,loaded", "loading,progress,loaded"].includes(states(events).join(",")), JSON.stringify(events));
    const progress = events.filter((event) => event.progress !== undefined).map((event) => Number(event.progress));
    assert.deepEqual(progress, [...progress].sort((a, b) => a - b), "progress only grows");
    assert.ok(progress.every((value) => value > 0 && value <= 1), JSON.stringify(progress));
    // Before the model's first step: the client knows why the first token is late.
    const order = proc.messages.filter((message) => message.id === "c1" && message.type === "event").map((message) => message.event);
    assert.ok(order.lastIndexOf("model_load") < order.indexOf("llm_start"), order.join(","));

    const again = await proc.request({ id: "c2", method: "chat", params: { agent: "a", input: "hello" } }, LOAD_MS);
    assert.equal(again.type, "result");
    assert.deepEqual(loadEvents("c2"), [], "the model was loaded already");
  });

  it("warm_up of another model streams loading and loaded (no step: no turn runs)", async () => {
    const reply = await proc.request({ id: "w1", method: "warm_up", params: { agent: "b" } }, LOAD_MS);
    assert.equal(reply.type, "result", JSON.stringify(reply));
    const events = loadEvents("w1");
    assert.deepEqual(events[0], { id: "w1", type: "event", event: "model_load", model: "second", state: "loading" });
    assert.deepEqual(events.at(-1), { id: "w1", type: "event", event: "model_load", model: "second", state: "loaded" });
    const warm = await proc.request({ id: "w2", method: "warm_up", params: { agent: "b" } }, LOAD_MS);
    assert.equal(warm.type, "result");
    assert.deepEqual(loadEvents("w2"), []);
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });
});

// A wait for memory over HTTP (serve-http, a budget that holds one tiny model): the stream is open
// and keeps the connection alive while the model waits, `: keep-alive` comments on chat
// completions, `ping` events on Messages (whose answer starts at the wait, not at the first step).
describe("HTTP streams while a request waits for memory (serve-http, built CLI, embedded engine)", () => {
  let tiny = "";
  const servers: HttpServer[] = [];
  const yaml = (budget: number): string =>
    configYaml({
      llama: {
        memory_budget: { ram: budget, vram: 0 },
        models: { ma: localModel(tiny, { ctx_size: 4096, parallel: 1, gpu_layers: 0 }), mb: localModel(tiny, { ctx_size: 4096, parallel: 1, gpu_layers: 0 }) },
      },
      agents: { a: { model: "ma", temperature: 0, max_tokens: 4, memory: false }, a_long: { model: "ma", temperature: 0, max_tokens: 3500, memory: false }, b: { model: "mb", temperature: 0, max_tokens: 4, memory: false } },
    });
  const start = async (budget: number): Promise<HttpServer> => {
    const server = await startHttpServer(yaml(budget), [], { LOCAL_AI_HTTP_KEEPALIVE_MS: "100" });
    servers.push(server);
    return server;
  };
  const post = (server: HttpServer, route: string, body: unknown, signal?: AbortSignal): Promise<Response> =>
    fetch(`${server.base}${route}`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  /** Reads the stream until `done(text so far)`; returns the text. */
  const readUntil = async (reader: ReadableStreamDefaultReader<Uint8Array>, done: (text: string) => boolean, sofar = ""): Promise<string> => {
    const decoder = new TextDecoder();
    let text = sofar;
    while (!done(text)) {
      const next = await reader.read();
      if (next.done) break;
      text += decoder.decode(next.value, { stream: true });
    }
    return text;
  };

  before(async () => {
    tiny = await ensureFixture("tiny", { seed: 3 });
  });
  after(async () => {
    for (const server of servers) {
      await server.stop();
      await rm(server.dir, { recursive: true, force: true });
    }
  });

  it("keep-alive comments (chat completions) and pings (Messages) flow while the model is queued; both answer once memory is free", async () => {
    // What one loaded tiny model counts for (the eager warm-up loads the default agent's): measured on a roomy budget.
    const probe = await start(1024 ** 4);
    const loaded = ((await (await fetch(`${probe.base}/v1/ps`)).json()) as { data: Array<{ id: string; memory: { ram_bytes: number } }> }).data;
    const perModel = loaded.find((entry) => entry.id === "ma")?.memory.ram_bytes ?? 0;
    assert.ok(perModel > 0, JSON.stringify(loaded));
    const server = await start(Math.floor(perModel * 1.5));

    // A long turn keeps ma busy: mb cannot load beside it, and ma may not be unloaded.
    const longTurn = new AbortController();
    const long = await post(server, "/v1/chat/completions", { model: "a_long", stream: true, messages: [{ role: "user", content: "talk" }] }, longTurn.signal);
    assert.equal(long.status, 200);
    const longReader = (long.body as ReadableStream<Uint8Array>).getReader();
    await readUntil(longReader, (text) => /"content":"[^"]/.test(text));

    const chat = await post(server, "/v1/chat/completions", { model: "b", stream: true, messages: [{ role: "user", content: "hello" }] });
    assert.equal(chat.status, 200);
    const chatReader = (chat.body as ReadableStream<Uint8Array>).getReader();
    const waiting = await readUntil(chatReader, (text) => text.includes(": keep-alive"));
    assert.ok(waiting.includes(": keep-alive"), waiting);
    assert.doesNotMatch(waiting, /"content":"[^"]/, "no token yet: the model waits for memory");

    const messages = await post(server, "/v1/messages", { model: "b", max_tokens: 4, stream: true, messages: [{ role: "user", content: "hello" }] });
    assert.equal(messages.status, 200, "the answer starts when the request waits for memory");
    const messagesReader = (messages.body as ReadableStream<Uint8Array>).getReader();
    // message_start and its first ping, then pings while the model waits.
    const pinged = await readUntil(messagesReader, (text) => text.split("event: ping").length > 2);
    assert.ok(pinged.startsWith("event: message_start"), pinged);
    assert.ok(!pinged.includes("content_block_delta"), "no token yet");

    // The long turn ends: ma is idle, so mb's load unloads it and both waiting requests are answered.
    longTurn.abort();
    await longReader.cancel().catch(() => undefined);
    const chatDone = await readUntil(chatReader, (text) => text.includes("data: [DONE]"), waiting);
    assert.ok(chatDone.includes("data: [DONE]") && chatDone.includes('"finish_reason":'), chatDone.slice(-500));
    const messagesDone = await readUntil(messagesReader, (text) => text.includes("event: message_stop"), pinged);
    assert.ok(messagesDone.includes("event: message_stop") && !messagesDone.includes("event: error"), messagesDone.slice(-500));
  });
});
