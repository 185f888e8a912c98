import assert from "node:assert/strict";
import { appendFile, readFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

let demoPath = "";
let tinyPath = "";

before(async () => {
  [demoPath, tinyPath] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
});

/** Two agents: `assistant` on the demo model (exact sentence), `talker` on the tiny model (never stops by itself). */
async function serve(): Promise<{ proc: CliProcess; dir: string }> {
  const { dir, configPath } = await tempConfig(agentsYaml(demoPath, tinyPath));
  return { proc: new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir }), dir };
}

async function stop(proc: CliProcess): Promise<void> {
  proc.send({ id: "bye", method: "shutdown" });
  assert.equal((await proc.exited).code, 0);
  assert.deepEqual(protocolViolations(proc), []);
}

const eventsOf = (proc: CliProcess, id: string | number): WireMessage[] => proc.messages.filter((m) => m.id === id && m.type === "event");

describe("serve-stdio chat (built CLI, embedded engine, generated GGUF)", () => {
  it("answers with the demo sentence, streaming the seed's events in order", async () => {
    const { proc } = await serve();
    const reply = await proc.request({ id: "c1", method: "chat", params: { session_id: "s1", input: "Hello!" } }, 30_000);
    assert.equal(reply.type, "result", JSON.stringify(reply));
    const result = reply.result as { response: string; session_id: string; trace_id: string; warnings: string[] };
    assert.equal(result.response, DEMO_SENTENCE);
    assert.equal(result.session_id, "s1");
    assert.match(result.trace_id, /^[0-9a-f]{16}$/);
    assert.deepEqual(result.warnings, []);
    const events = eventsOf(proc, "c1");
    const names = events.map((e) => e.event);
    // The first chat loads the model: model_load (loading, its progress, loaded) before the memory step.
    assert.deepEqual(names.filter((n, i) => n !== "llm_chunk" && !(n === "model_load" && names[i - 1] === "model_load")), ["run_start", "model_load", "memory_start", "llm_start", "usage", "llm_done", "final"]);
    const loads = events.filter((e) => e.event === "model_load");
    assert.deepEqual([loads[0]?.state, loads.at(-1)?.state], ["loading", "loaded"]);
    assert.equal(events.filter((e) => e.event === "llm_chunk").map((e) => e.delta).join(""), DEMO_SENTENCE);
    assert.deepEqual(events[0], { id: "c1", type: "event", event: "run_start", user_input: "Hello!", trace_id: result.trace_id, session_id: "s1", agent: "assistant" });
    assert.deepEqual(events.at(-1), { id: "c1", type: "event", event: "final", step: 0, response: DEMO_SENTENCE });
    await stop(proc);
  });

  it("a second turn sees the first; a session id with ../ is refused", async () => {
    const { proc, dir } = await serve();
    await proc.request({ id: 1, method: "chat", params: { session_id: "memo", input: "first" } }, 30_000);
    const second = await proc.request({ id: 2, method: "chat", params: { session_id: "memo", input: "second" } }, 30_000);
    assert.equal(second.type, "result");
    const usage = (id: number): number => Number(eventsOf(proc, id).find((e) => e.event === "usage")?.input_tokens);
    assert.ok(usage(2) > usage(1) + 10, `the second prompt carries the first turn (${usage(1)} -> ${usage(2)} tokens)`);
    const history = await readFile(path.join(dir, "data", "sessions", "default_user", "memo", "history.jsonl"), "utf8");
    assert.equal(history.trim().split("\n").length, 2);
    for (const [id, params] of [
      ["bad1", { session_id: "../../etc", input: "x" }],
      ["bad2", { user_id: "a/b", input: "x" }],
      ["bad3", { session_id: ".hidden", input: "x" }],
    ] as const) {
      const reply = await proc.request({ id, method: "chat", params });
      assert.equal(reply.type, "error");
      assert.equal(reply.code, "invalid_request");
    }
    await stop(proc);
  });

  it("repairs a corrupt history file and says so in warnings", async () => {
    const { proc, dir } = await serve();
    await proc.request({ id: 1, method: "chat", params: { session_id: "torn", input: "first" } }, 30_000);
    const file = path.join(dir, "data", "sessions", "default_user", "torn", "history.jsonl");
    await appendFile(file, '{"trace_id":"x","agent":"assistant","messages":[{"role":"us');
    const reply = await proc.request({ id: 2, method: "chat", params: { session_id: "torn", input: "again" } }, 30_000);
    assert.equal(reply.type, "result");
    const { warnings, response } = reply.result as { warnings: string[]; response: string };
    assert.equal(response, DEMO_SENTENCE);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? "", /corrupt|torn|repaired/i);
    const lines = (await readFile(file, "utf8")).trim().split("\n");
    assert.equal(lines.length, 2, "the good turn plus the new one");
    for (const line of lines) JSON.parse(line);
    await stop(proc);
  });

  it("runs parallel chats and cancels one by request_id while the other finishes", async () => {
    const { proc } = await serve();
    proc.send({ id: "long", method: "chat", params: { session_id: "p1", agent: "talker", input: "Tell me everything" } });
    proc.send({ id: "short", method: "chat", params: { session_id: "p2", input: "Hi" } });
    await proc.waitFor((m) => m.id === "long" && m.event === "llm_chunk", 30_000);
    const cancel = await proc.request({ id: "x1", method: "cancel", params: { request_id: "long" } });
    assert.deepEqual(cancel, { id: "x1", type: "result", result: { status: "ok" } });
    const long = await proc.response("long", 10_000);
    assert.equal(long.type, "error");
    assert.equal(long.code, "cancelled");
    const short = await proc.response("short", 30_000);
    assert.equal((short.result as { response: string }).response, DEMO_SENTENCE);
    // Nothing for the cancelled chat after its error line.
    const at = proc.messages.indexOf(long);
    assert.deepEqual(proc.messages.slice(at + 1).filter((m) => m.id === "long"), []);
    const unknown = await proc.request({ id: "x2", method: "cancel", params: { request_id: "nope" } });
    assert.equal(unknown.code, "invalid_request");
    await stop(proc);
  });

  it("cancel without request_id: the only chat is cancelled; with two active it is refused", async () => {
    const { proc } = await serve();
    proc.send({ id: "a", method: "chat", params: { session_id: "u1", agent: "talker", input: "go on" } });
    await proc.waitFor((m) => m.id === "a" && m.event === "llm_chunk", 30_000);
    proc.send({ id: "b", method: "chat", params: { session_id: "u2", agent: "talker", input: "go on" } });
    await proc.waitFor((m) => m.id === "b" && m.event === "run_start", 30_000);
    const refused = await proc.request({ id: "k1", method: "cancel", params: {} });
    assert.equal(refused.code, "invalid_request");
    assert.match(String(refused.message), /request_id is required/);
    assert.equal((await proc.request({ id: "k2", method: "cancel", params: { request_id: "b" } })).type, "result");
    assert.equal((await proc.response("b", 10_000)).code, "cancelled");
    assert.equal((await proc.request({ id: "k3", method: "cancel" })).type, "result");
    assert.equal((await proc.response("a", 10_000)).code, "cancelled");
    const none = await proc.request({ id: "k4", method: "cancel" });
    assert.equal(none.code, "invalid_request");
    await stop(proc);
  });

  it("a missing config answers config_missing for chat but keeps serving", async () => {
    const proc = new CliProcess(["serve-stdio", "--config", "/nonexistent/config.yaml"]);
    const reply = await proc.request({ id: 1, method: "chat", params: { input: "hi" } });
    assert.equal(reply.code, "config_missing");
    assert.equal((await proc.request({ id: 2, method: "ping" })).type, "result");
    await stop(proc);
  });
});

