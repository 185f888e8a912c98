import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { startHttpServer, type HttpServer } from "../helpers/http-server.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

/**
 * stdio.coalesce_ms / http.coalesce_ms through the built CLI: merged text deltas carry exactly the
 * demo sentence, in fewer events, with every other event where it was. A 1000 ms window makes the
 * merge deterministic on a loaded machine: the first token leaves at once, the rest of the step
 * leaves as one event when `usage` arrives.
 */

let demoPath = "";
let tinyPath = "";

before(async () => {
  [demoPath, tinyPath] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
});

function yaml(section: "stdio" | "http", coalesceMs: number): string {
  return `${section}:\n  coalesce_ms: ${coalesceMs}\n${agentsYaml(demoPath, tinyPath)}`;
}

async function serveStdio(coalesceMs: number): Promise<CliProcess> {
  const { dir, configPath } = await tempConfig(yaml("stdio", coalesceMs));
  return new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
}

async function stop(proc: CliProcess): Promise<void> {
  proc.send({ id: "bye", method: "shutdown" });
  assert.equal((await proc.exited).code, 0);
  assert.deepEqual(protocolViolations(proc), []);
}

/** One chat's events, in order. */
async function chatEvents(proc: CliProcess, id: string): Promise<WireMessage[]> {
  const reply = await proc.request({ id, method: "chat", params: { session_id: id, input: "Hello!" } }, 30_000);
  assert.equal(reply.type, "result", JSON.stringify(reply));
  assert.equal((reply.result as { response: string }).response, DEMO_SENTENCE);
  return proc.messages.filter((m) => m.id === id && m.type === "event");
}

/** Event names with each run of consecutive llm_chunk collapsed to one. */
/** Event names with each run of llm_chunk collapsed; the first turn's model_load events (the load, not the stream) left out. */
const shape = (events: WireMessage[]): string[] =>
  events
    .map((e) => String(e.event))
    .filter((n) => n !== "model_load")
    .filter((n, i, all) => !(n === "llm_chunk" && all[i - 1] === "llm_chunk"));
const text = (events: WireMessage[]): string => events.filter((e) => e.event === "llm_chunk").map((e) => String(e.delta)).join("");
const count = (events: WireMessage[]): number => events.filter((e) => e.event === "llm_chunk").length;

describe("text delta coalescing (built CLI, demo model)", () => {
  it("serve-stdio: merged deltas are the demo sentence, in fewer llm_chunk events, order otherwise unchanged", async () => {
    const [merged, plain] = await Promise.all([serveStdio(1000), serveStdio(0)]);
    const on = await chatEvents(merged, "on");
    const off = await chatEvents(plain, "off");
    assert.equal(text(on), DEMO_SENTENCE);
    assert.equal(text(off), DEMO_SENTENCE);
    assert.ok(count(off) > 2, `the demo sentence is several tokens (${count(off)} chunks)`);
    assert.equal(count(on), 2, "the first token at once, the rest of the step as one event");
    assert.ok(count(on) < count(off));
    assert.deepEqual(shape(on), shape(off));
    assert.deepEqual(shape(on), ["run_start", "memory_start", "llm_start", "llm_chunk", "usage", "llm_done", "final"]);
    await Promise.all([stop(merged), stop(plain)]);
  });

  it("serve-stdio: a cancelled chat's pending text leaves before its error, nothing after it", async () => {
    const proc = await serveStdio(1000);
    proc.send({ id: "long", method: "chat", params: { session_id: "c1", agent: "talker", input: "Tell me everything" } });
    await proc.waitFor((m) => m.id === "long" && m.event === "llm_chunk", 30_000);
    // Tokens keep coming inside the 1 s window; they are pending when the cancel arrives. The
    // pending text has no outside event (it is what the window holds back), so this pause only
    // lets the model produce some: the assertions below hold for any amount, one token or many.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await proc.request({ id: "x", method: "cancel", params: { request_id: "long" } })).type, "result");
    const error = await proc.response("long", 10_000);
    assert.equal(error.code, "cancelled");
    const mine = proc.messages.filter((m) => m.id === "long");
    assert.equal(mine.at(-1), error, "nothing for the cancelled chat after its error");
    const chunks = mine.filter((m) => m.event === "llm_chunk");
    // The first token, then (1 s window) the pending text, flushed right before the error.
    assert.ok(chunks.length >= 2, `${chunks.length} llm_chunk events`);
    assert.equal(mine.at(-2)?.event, "llm_chunk", JSON.stringify(mine.slice(-3)));
    await stop(proc);
  });

  describe("serve-http", () => {
    let server: HttpServer;
    before(async () => {
      server = await startHttpServer({ yaml: yaml("http", 1000) });
    });
    after(async () => {
      await server?.stop();
    });

    it("the openai client streams the demo sentence unchanged, in fewer content chunks", async () => {
      const client = new OpenAI({ baseURL: `${server.baseURL}/v1`, apiKey: "none", maxRetries: 0, timeout: 30_000 });
      const stream = await client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "Hello!" }], stream: true });
      let streamed = "";
      let contentChunks = 0;
      for await (const chunk of stream) {
        const content = chunk.choices[0]?.delta?.content;
        if (content !== undefined && content !== null && content !== "") {
          contentChunks++;
          streamed += content;
        }
      }
      assert.equal(streamed, DEMO_SENTENCE);
      assert.equal(contentChunks, 2, "the first token at once, the rest as one chunk");
    });
  });
});
