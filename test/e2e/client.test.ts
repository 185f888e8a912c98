import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { LocalAiClient, LocalAiError, type ChatEvent, type ExitInfo, type LocalAiClientOptions } from "../../src/client/index.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { tempConfig } from "../helpers/temp-config.js";
import { WireTap } from "../helpers/wire-recorder.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { rejection } from "../helpers/local-ai-rejection.js";
import { isProcessAlive } from "../../src/shared/process/is-process-alive.js";
import { collect } from "../helpers/collect.js";

const HOST = fileURLToPath(new URL("../helpers/client-host.js", import.meta.url));
let configPath = "";

before(async () => {
  const [demo, tiny] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
  ({ configPath } = await tempConfig(agentsYaml(demo, tiny)));
});

/** The client on the built CLI (its default command), every line checked against schema/ after the file. */
function client(options: LocalAiClientOptions = {}): LocalAiClient {
  return new LocalAiClient({ config: configPath, env: { LOCAL_AI_LOG_LEVEL: "warn" }, trace: new WireTap("v1", "LocalAiClient").trace, ...options });
}

/** Bounded wait for a process to be gone (a process has no event we can wait on from here). */
async function gone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (isProcessAlive(pid) && Date.now() < until) await sleep(50);
  return !isProcessAlive(pid);
}

describe("LocalAiClient on the built CLI (embedded engine, generated GGUF)", () => {
  it("starts, streams a chat's typed events in order, and resolves its result", async () => {
    const local = client();
    const init = await local.start();
    assert.equal(init.server.name, "local-ai");
    assert.ok(init.capabilities.methods.includes("chat"));
    const turn = local.chat({ session_id: "c1", input: "Hello!" });
    assert.match(turn.id, /^\d+$/);
    const events = await collect(turn);
    const result = await turn.result;
    assert.equal(result.response, DEMO_SENTENCE);
    assert.equal(result.session_id, "c1");
    // The first chat loads the model: model_load (loading, its progress, loaded) before the memory step.
    const names = events.map((event) => event.event);
    assert.deepEqual(names.filter((name, i) => name !== "llm_chunk" && !(name === "model_load" && names[i - 1] === "model_load")), ["run_start", "model_load", "memory_start", "llm_start", "usage", "llm_done", "final"]);
    const text = events.map((event) => (event.event === "llm_chunk" ? event.delta : "")).join("");
    assert.equal(text, DEMO_SENTENCE);
    const start = events[0];
    assert.ok(start?.event === "run_start" && start.trace_id === result.trace_id && start.session_id === "c1");
    await local.close();
  });

  it("ps() answers the budget and every configured model: the chat's model loaded, the other not", async () => {
    const local = client();
    await local.chat({ session_id: "ps1", input: "Hello!" }).result;
    const report = await local.ps();
    assert.deepEqual(report.models.map((model) => [model.name, model.engine, model.status, model.pinned, model.in_flight]), [["default", "embedded", "loaded", false, 0], ["tiny", "embedded", "unloaded", false, 0]]);
    const loaded = report.models[0];
    assert.ok(loaded !== undefined && loaded.memory.measured && loaded.memory.ram_bytes > 0);
    assert.equal(report.budget.used_ram_bytes, loaded.memory.ram_bytes);
    assert.ok(report.budget.ram_bytes >= report.budget.used_ram_bytes, JSON.stringify(report.budget));
    await local.close();
  });

  it("aborting the signal cancels the chat in local-ai: rejects with cancelled, nothing after, the session is free again", async () => {
    const local = client();
    const controller = new AbortController();
    const turn = local.chat({ session_id: "cancel-me", agent: "talker", input: "Tell me everything" }, { signal: controller.signal });
    const seen: ChatEvent[] = [];
    let rejectedAt = -1;
    turn.result.catch(() => (rejectedAt = seen.length));
    await assert.rejects(
      (async () => {
        for await (const event of turn) {
          seen.push(event);
          if (event.event === "llm_chunk") controller.abort();
        }
      })(),
      (error: unknown) => error instanceof LocalAiError && error.code === "cancelled",
    );
    assert.equal((await rejection(turn.result)).code, "cancelled");
    assert.equal(seen.at(-1)?.event, "llm_chunk", "the chunk that triggered the abort was the last event");
    assert.equal(rejectedAt, seen.length, "no event after the rejection");
    // The cancel reached local-ai: the session's lock is released, so a turn on it completes.
    const next = local.chat({ session_id: "cancel-me", input: "Hi" });
    assert.equal((await next.result).response, DEMO_SENTENCE);
    await local.close();
  });

  it("runs two chats in parallel, each with its own events", async () => {
    const local = client();
    const [a, b] = [local.chat({ session_id: "pa", input: "one" }), local.chat({ session_id: "pb", input: "two" })];
    const [eventsA, eventsB] = await Promise.all([collect(a), collect(b)]);
    const [resultA, resultB] = await Promise.all([a.result, b.result]);
    assert.deepEqual([resultA.response, resultB.response], [DEMO_SENTENCE, DEMO_SENTENCE]);
    assert.notEqual(a.id, b.id);
    const sessionOf = (events: ChatEvent[]): unknown => events.find((event) => event.event === "run_start")?.["session_id" as never];
    assert.deepEqual([sessionOf(eventsA), sessionOf(eventsB)], ["pa", "pb"]);
    await local.close();
  });

  it("an error frame is a LocalAiError with the protocol's code, message and details", async () => {
    const local = client();
    const unknownAgent = await rejection(local.chat({ input: "hi", agent: "nobody" }).result);
    assert.equal(unknownAgent.code, "invalid_request");
    assert.match(unknownAgent.message, /Unknown agent "nobody"/);
    assert.deepEqual(unknownAgent.details, { param: "agent" });
    const both = await rejection(local.plan({ model: "default", all: true }));
    assert.equal(both.code, "invalid_request");
    assert.equal((await rejection(local.request("no_such_method"))).code, "unknown_method");
    const report = await local.doctor();
    assert.equal(typeof report.ok, "boolean");
    await local.close();
  });

  it("SIGKILL mid-chat: the chat rejects with process_exited at once, the client restarts, the next chat works", async () => {
    const local = client({ restart: { initialDelayMs: 50 } });
    await local.start();
    const firstPid = local.pid ?? -1;
    const exited = once(local, "exit") as Promise<[ExitInfo]>;
    const restarted = once(local, "restart");
    const turn = local.chat({ session_id: "killed", agent: "talker", input: "Tell me everything" });
    for await (const event of turn) if (event.event === "llm_chunk") break;
    process.kill(firstPid, "SIGKILL");
    const error = await rejection(turn.result);
    assert.equal(error.code, "process_exited");
    assert.equal(error.details?.signal, "SIGKILL");
    assert.ok(Array.isArray(error.details?.stderr_tail));
    const [info] = await exited;
    assert.deepEqual([info.pid, info.signal, info.expected, info.restart_in_ms], [firstPid, "SIGKILL", false, 50]);
    await restarted;
    assert.notEqual(local.pid, firstPid);
    assert.equal((await local.chat({ session_id: "after", input: "Hi" }).result).response, DEMO_SENTENCE);
    await local.close();
  });

  it("close() sends shutdown and leaves no process behind; later calls reject with client_closed", async () => {
    const local = client();
    await local.start();
    const pid = local.pid ?? -1;
    assert.ok(isProcessAlive(pid));
    const exited = once(local, "exit") as Promise<[ExitInfo]>;
    await local.close();
    const [info] = await exited;
    assert.deepEqual([info.exit_code, info.expected, info.restart_in_ms], [0, true, null]);
    assert.equal(isProcessAlive(pid), false, "local-ai is gone when close() resolves");
    assert.equal((await rejection(local.ping())).code, "client_closed");
  });

  it("a host that dies without closing leaves no local-ai behind (stdin EOF ends it)", async () => {
    const host = spawn(process.execPath, [HOST, configPath], { stdio: ["ignore", "pipe", "inherit"] });
    const [line] = (await once(createInterface({ input: host.stdout }), "line")) as [string];
    const { pid } = JSON.parse(line) as { pid: number };
    await once(host, "exit");
    assert.ok(await gone(pid, 30_000), `local-ai ${pid} outlived its host`);
  });
});
