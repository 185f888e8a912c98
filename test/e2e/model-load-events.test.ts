// `model_load` events for every load a request triggers (not only a wait for memory), on the built
// CLI's serve-stdio with a real embedded model: a first chat hears `loading` (then its progress, as
// node-llama-cpp reports it) and `loaded` before the model answers; a chat on the loaded model
// hears nothing; `warm_up` of another model streams the same states.
import assert from "node:assert/strict";
import { rm, writeFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
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
