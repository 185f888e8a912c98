// The Pod protocol by direct call (createPod, seed 004): the socket pod's scenarios with listener
// functions, on the `openai` engine over a scripted upstream (every model step known exactly) and
// server-everything's `echo` gated by approval; then one session moved between createPod and
// serve-socket and back.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { createPod, type Pod, type PodEvent } from "../../src/app/create-pod.js";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { everythingServer } from "../helpers/mcp-servers.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { PodListenerLog } from "../helpers/pod-listener-log.js";
import { startPodIn } from "../helpers/pod-process.js";
import { PodSocketClient } from "../helpers/pod-socket-client.js";
import { tempConfig } from "../helpers/temp-config.js";

let upstream: AgentUpstream;
let dir = "";
let configPath = "";
const logLines: string[] = [];
const logger = pino({ level: "info" }, new Writable({ write: (chunk: Buffer, _encoding, done) => void (logLines.push(chunk.toString()), done()) }));
const pods: Pod[] = [];

const open = async (): Promise<Pod> => {
  const pod = await createPod({ config: configPath, cwd: dir, name: "hello-pod", logger });
  pods.push(pod);
  return pod;
};
const listeners = (pod: Pod, count: number): PodListenerLog[] => Array.from({ length: count }, () => new PodListenerLog(pod));
/** usage counts depend on how many requests the upstream has seen: equal sequences compare without them. */
const withoutUsage = (events: PodEvent[]): PodEvent[] => events.filter((e) => e.event !== "usage");
const status = (pod: Pod, state: "idle" | "running" | "paused"): PodEvent => ({ event: "status", data: { state, session_id: pod.sessionId, pod_name: "hello-pod" } });

before(async () => {
  upstream = await startAgentUpstream();
  ({ dir, configPath } = await tempConfig(
    configYaml({
      llama: { models: { default: { ...openaiModel(upstream.baseUrl, "test-model"), ctx_size: 8192 } } },
      stdio: { coalesce_ms: 0 },
      agents: { assistant: { temperature: 0, tools: ["echo"] } },
      mcp: { servers: { everything: mcpServer(everythingServer(), { requires_approval: ["echo"] }) } },
    }),
  ));
});

after(async () => {
  await Promise.all(pods.map((pod) => pod.close()));
  await upstream?.close();
});

describe("createPod: the Pod protocol by direct call", () => {
  let directTurn: PodEvent[] = [];

  for (const count of [2, 10]) {
    it(`${count} listeners: get_status reaches every listener; a turn's events are the same for all, exactly`, async () => {
      const pod = await open();
      const logs = listeners(pod, count);
      pod.getStatus();
      for (const log of logs) assert.deepEqual(log.events, [status(pod, "idle")]);
      upstream.push({ text: ["The capital", " of France", " is Paris."] });
      pod.run("What is the capital of France?");
      await Promise.all(logs.map((log) => log.waitFor((e) => e.event === "turn_end")));
      await Promise.all(logs.map((log) => log.waitFor((e) => e.event === "status" && e.data.state === "idle", 2)));
      const turn = logs[0]!.events.slice(1);
      const number = (turn.find((e) => e.event === "turn_start")?.data as { turn: number }).turn;
      assert.deepEqual(withoutUsage(turn), [
        status(pod, "running"),
        { event: "turn_start", data: { turn: number } },
        { event: "text_delta", data: { text: "The capital" } },
        { event: "text_delta", data: { text: " of France" } },
        { event: "text_delta", data: { text: " is Paris." } },
        { event: "text_done", data: { text: "The capital of France is Paris." } },
        { event: "turn_end", data: { turn: number, result: "finished" } },
        status(pod, "idle"),
      ]);
      assert.equal(turn.filter((e) => e.event === "usage").length, 1);
      for (let i = 1; i < count; i++) assert.deepEqual(logs[i]!.events, logs[0]!.events, `listener ${i} saw another sequence`);
      directTurn = turn;
      await pod.close();
    });
  }

  it("refusals and bad input are error events to every listener, never a throw", async () => {
    const pod = await open();
    const [a, b] = listeners(pod, 2) as [PodListenerLog, PodListenerLog];
    pod.cancel();
    pod.resume();
    pod.send({ method: "fly" } as never);
    pod.send({ method: "run", params: {} } as never);
    const errors = (log: PodListenerLog): unknown[] => log.events.filter((e) => e.event === "error").map((e) => e.data);
    assert.deepEqual(errors(a), [
      { code: "not_running", message: "No turn is running or paused" },
      { code: "not_running", message: "No turn is running or paused" },
      { code: "internal", message: 'unknown method "fly"; supported: run, resume, cancel, get_status, get_history' },
      { code: "internal", message: "invalid params for run: params.input must be a non-empty string" },
    ]);
    // A running turn: a second run is already_running, resume is not_paused; cancel ends it.
    upstream.push({ hang: ["thinking..."] });
    pod.run("a long one");
    await a.waitFor((e) => e.event === "text_delta");
    const from = a.events.length;
    pod.run("another");
    pod.resume();
    assert.deepEqual(errors({ events: a.events.slice(from) } as PodListenerLog), [
      { code: "already_running", message: "Pod is already executing a turn" },
      { code: "not_paused", message: "The turn is running, not paused" },
    ]);
    pod.cancel();
    await a.waitFor((e) => e.event === "status" && e.data.state === "idle", from);
    assert.deepEqual(a.events.slice(-2).map((e) => e.data), [{ turn: (a.events.find((e) => e.event === "turn_start")!.data).turn, result: "finished", reason: "cancelled" }, status(pod, "idle").data]);
    assert.deepEqual(b.events, a.events);
    await pod.close();
  });

  it("pauses on the gated MCP tool, resume runs it and finishes; cancel while paused declines the call", async () => {
    const pod = await open();
    const [a, b] = listeners(pod, 2) as [PodListenerLog, PodListenerLog];
    upstream.push({ call: { id: "u1", name: "echo", arguments: { message: "hi" } } }, { text: ["echoed"] });
    pod.run("echo hi");
    await a.nextState("paused");
    const turn = (a.events.find((e) => e.event === "turn_start")!.data).turn;
    const id = `call_${turn}_1`;
    const args = JSON.stringify({ message: "hi" });
    assert.deepEqual(withoutUsage(a.events), [
      status(pod, "running"),
      { event: "turn_start", data: { turn } },
      { event: "tool_call_start", data: { id, name: "echo" } },
      { event: "tool_call_args_delta", data: { id, json: args } },
      { event: "tool_call_done", data: { id, name: "echo", arguments: args } },
      { event: "turn_end", data: { turn, result: "paused" } },
      { event: "status", data: { ...status(pod, "paused").data, pending: { id, name: "echo", arguments: args } } as never },
    ]);
    const resumeFrom = a.events.length;
    pod.resume();
    await a.waitFor((e) => e.event === "status" && e.data.state === "idle", resumeFrom);
    const resumed = withoutUsage(a.events.slice(resumeFrom));
    assert.deepEqual(resumed.map((e) => e.event), ["status", "turn_start", "tool_result", "text_delta", "text_done", "turn_end", "status"]);
    assert.deepEqual(resumed[2], { event: "tool_result", data: { id, output: "Echo: hi", is_error: false } });
    assert.deepEqual(resumed[5], { event: "turn_end", data: { turn, result: "finished" } });

    upstream.push({ call: { id: "u2", name: "echo", arguments: { message: "no" } } });
    pod.run("echo no");
    await a.nextState("paused");
    const second = turn + 1;
    const cancelFrom = a.events.length;
    pod.cancel();
    await a.waitFor((e) => e.event === "status", cancelFrom);
    assert.deepEqual(a.events.slice(cancelFrom), [
      { event: "tool_result", data: { id: `call_${second}_1`, output: "declined: the turn was cancelled", is_error: true } },
      { event: "turn_end", data: { turn: second, result: "finished", reason: "cancelled" } },
      status(pod, "idle"),
    ]);
    assert.deepEqual(b.events, a.events);
    await pod.close();
  });

  it("a listener unregistered mid-turn gets nothing more; one that throws is logged and the others get every event", async () => {
    const pod = await open();
    const watcher = new PodListenerLog(pod);
    const leaver = new PodListenerLog(pod, (event, log) => {
      if (event.event === "text_delta") log.unlisten();
    });
    let thrown = 0;
    pod.listen(() => {
      thrown++;
      throw new Error("listener bug");
    });
    const last = new PodListenerLog(pod);
    upstream.push({ text: ["one", " two"] });
    pod.run("count");
    await watcher.waitFor((e) => e.event === "status" && e.data.state === "idle", 1);
    assert.deepEqual(withoutUsage(watcher.events).map((e) => e.event), ["status", "turn_start", "text_delta", "text_delta", "text_done", "turn_end", "status"]);
    assert.deepEqual(leaver.events, watcher.events.slice(0, 3));
    assert.deepEqual(last.events, watcher.events);
    assert.equal(thrown, watcher.events.length);
    assert.equal(logLines.filter((line) => line.includes("a pod listener threw")).length, thrown);
    await pod.close();
  });

  it("one session through createPod, serve-socket, then createPod again: the history continues", async () => {
    const first = await open();
    const sessionId = first.sessionId;
    const log = new PodListenerLog(first);
    first.getHistory();
    const before = ((await log.next("history")).data as { items: unknown[] }).items.length;
    assert.ok(before >= 2, "the earlier tests' turns are in this session");
    await first.close();

    const socketPod = await startPodIn(dir, configPath, ["--name", "hello-pod"]);
    try {
      const client = await PodSocketClient.listening(socketPod.socketPath);
      client.send("get_history");
      assert.equal(((await client.next("history")).data.items as unknown[]).length, before);
      const from = client.events.length;
      upstream.push({ text: ["The capital", " of France", " is Paris."] });
      client.send("run", { input: "What is the capital of France?" });
      await client.waitFor((e) => e.event === "status" && e.data.state === "idle", { from });
      // The socket client sees what a direct listener saw for the same turn (turn 1 of each pod).
      assert.deepEqual(withoutUsage(client.events.slice(from) as PodEvent[]), withoutUsage(directTurn));
      client.send("get_history");
      assert.equal(((await client.next("history")).data.items as unknown[]).length, before + 2);
      await client.close();
    } finally {
      socketPod.proc.kill("SIGTERM");
      await socketPod.proc.exited;
    }

    const again = await open();
    assert.equal(again.sessionId, sessionId);
    const log2 = new PodListenerLog(again);
    again.getHistory();
    const items = ((await log2.next("history")).data as { items: Array<{ role: string; content: string }> }).items;
    assert.equal(items.length, before + 2);
    assert.deepEqual(items.slice(-2).map((m) => [m.role, m.content]), [["user", "What is the capital of France?"], ["assistant", "The capital of France is Paris."]]);
    await again.close();
  });

  it("createPod rejects what stops a pod from existing with a RuntimeError (code, message)", async () => {
    await assert.rejects(createPod({ config: "missing.yaml", cwd: dir }), (error: { code?: string; message?: string }) => error.code === "config_missing" && /no config file at/.test(error.message ?? ""));
    await assert.rejects(createPod({ config: { app: { data_dir: "./data" }, agents: { a: { temperature: "hot" } } }, cwd: dir }), (error: { code?: string }) => error.code === "config_invalid");
    // A data dir that cannot be created (its parent is a file).
    const unwritable = { app: { data_dir: `${configPath}/data` }, llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } }, agents: { assistant: {} } };
    await assert.rejects(createPod({ config: unwritable, cwd: dir }), (error: { code?: string; message?: string }) => error.code === "storage_error" && /cannot keep the pod's state under/.test(error.message ?? ""));
  });
});
