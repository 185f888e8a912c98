import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { echoToolYaml } from "../helpers/agents-yaml.js";
import { CliProcess } from "../helpers/cli-process.js";
import { alive } from "../helpers/mcp-servers.js";
import { childrenOf } from "../helpers/process-children.js";
import { startPod, type PodProcess } from "../helpers/pod-process.js";
import { PodSocketClient, type PodMessage } from "../helpers/pod-socket-client.js";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";


// Order matters: the demo model calls the tool whenever a "/echo" is in its context, and memory
// retrieval brings past "/echo" turns back. Plain-text turns therefore run before the tool turns.

/** Event names with each run of text_delta collapsed into one `text_delta*`. */
function shape(events: PodMessage[]): string[] {
  const out: string[] = [];
  for (const e of events) if (!(e.event === "text_delta" && out.at(-1) === "text_delta*")) out.push(e.event === "text_delta" ? "text_delta*" : e.event);
  return out;
}

const text = (events: PodMessage[]): string => events.filter((e) => e.event === "text_delta").map((e) => String(e.data.text)).join("");

let pod: PodProcess;
let sessionId = "";

before(async () => {
  const toolModel = await ensureFixture("demo", { toolMode: true });
  pod = await startPod(
    `stdio:\n  max_line_bytes: 1024\n${echoToolYaml(toolModel)}`,
    ["--name", "hello-pod"],
  );
});

after(() => pod?.proc.kill("SIGKILL"));

describe("serve-socket: the Pod protocol through the built CLI (demo model, MCP server-everything)", () => {
  it("answers get_status with idle, the session kept in the pod's state file, and the pod name", async () => {
    const client = await PodSocketClient.connect(pod.socketPath);
    client.send("get_status");
    const status = await client.next("status");
    const state = JSON.parse(await readFile(path.join(pod.dir, "data", "pods", "hello-pod.json"), "utf8")) as { session_id: string };
    sessionId = state.session_id;
    assert.deepEqual(status.data, { state: "idle", session_id: sessionId, pod_name: "hello-pod" });
    await client.close();
  });

  for (const count of [2, 10]) {
    it(`${count} clients see the same event sequence, exactly`, async () => {
      const clients = await PodSocketClient.listeningAll(pod.socketPath, count);
      const from = clients.map((c) => c.events.length);
      clients[count - 1]!.send("run", { input: "hello" });
      await Promise.all(clients.map((c) => c.waitFor((e) => e.event === "status" && e.data.state === "idle", { from: from[clients.indexOf(c)]! })));
      const turn = (i: number): PodMessage[] => clients[i]!.events.slice(from[i]);
      const first = turn(0);
      const number = first.find((e) => e.event === "turn_start")?.data.turn;
      assert.deepEqual(shape(first), ["status", "turn_start", "text_delta*", "usage", "text_done", "turn_end", "status"]);
      assert.deepEqual(first[0]?.data, { state: "running", session_id: sessionId, pod_name: "hello-pod" });
      assert.equal(text(first), DEMO_SENTENCE);
      assert.deepEqual(first.find((e) => e.event === "text_done")?.data, { text: DEMO_SENTENCE });
      assert.deepEqual(first.find((e) => e.event === "turn_end")?.data, { turn: number, result: "finished" });
      for (let i = 1; i < count; i++) assert.deepEqual(turn(i), first, `client ${i} saw another sequence`);
      await Promise.all(clients.map((c) => c.close()));
    });
  }

  it("a client that leaves mid-turn changes nothing for the turn", async () => {
    const [watcher, leaver] = (await PodSocketClient.listeningAll(pod.socketPath, 2)) as [PodSocketClient, PodSocketClient];
    const from = watcher.events.length;
    leaver.send("run", { input: "hello again" });
    await leaver.next("turn_start");
    leaver.destroy();
    await watcher.waitFor((e) => e.event === "status" && e.data.state === "idle", { from });
    const turn = watcher.events.slice(from);
    assert.deepEqual(shape(turn), ["status", "turn_start", "text_delta*", "usage", "text_done", "turn_end", "status"]);
    assert.equal(text(turn), DEMO_SENTENCE);
    await watcher.close();
  });

  it("bad lines get an error for their sender only, and the connection keeps working", async () => {
    const [bad, other] = (await PodSocketClient.listeningAll(pod.socketPath, 2)) as [PodSocketClient, PodSocketClient];
    const otherFrom = other.events.length;
    bad.sendRaw("not json\n");
    assert.deepEqual((await bad.next("error")).data, { code: "internal", message: "invalid request: the line is not JSON" });
    bad.send("fly");
    assert.match(String((await bad.next("error")).data.message), /^unknown method "fly"; supported: run, resume, cancel, get_status, get_history$/);
    bad.send("run", {});
    assert.match(String((await bad.next("error")).data.message), /params\.input/);
    bad.sendRaw(`{"method":"run","params":{"input":"${"x".repeat(2000)}"}}\n`);
    assert.match(String((await bad.next("error")).data.message), /longer than 1024; discarded/);
    bad.send("cancel");
    assert.equal((await bad.next("error")).data.code, "not_running");
    bad.send("get_status");
    assert.equal((await bad.next("status")).data.state, "idle");
    // The status answer goes to every client (seed 004); the errors before it did not.
    await other.waitFor((e) => e.event === "status", { from: otherFrom });
    assert.deepEqual(other.events.slice(otherFrom).map((e) => e.event), ["status"]);
    await Promise.all([bad.close(), other.close()]);
  });

  it("local-ai pod --run prints the turn and exits 0 when it finished", async () => {
    const finished = new CliProcess(["pod", "--socket", pod.socketPath, "--run", "hello"], { cwd: pod.dir });
    assert.equal((await finished.exited).code, 0, finished.stderr);
    assert.match(finished.stdout, /^\[status\] running · session \S+ · pod hello-pod\n\[turn \d+\]\nHello! I am a tiny demo model running on llama\.cpp\.\n\[usage\] in \d+ · out \d+\n\[turn \d+ finished\]\n/);
  });

  it("pauses on the gated MCP tool, refuses run while paused, and resume runs the call and finishes", async () => {
    const [a, b] = (await PodSocketClient.listeningAll(pod.socketPath, 2)) as [PodSocketClient, PodSocketClient];
    const [fromA, fromB] = [a.events.length, b.events.length];
    a.send("run", { input: `${DEMO_TOOL_TRIGGER} hi` });
    await a.waitFor((e) => e.event === "status" && e.data.state === "paused", { from: fromA });
    const paused = a.events.slice(fromA);
    const turn = paused.find((e) => e.event === "turn_start")?.data.turn as number;
    const id = `call_${turn}_1`;
    const args = JSON.stringify({ message: "hi" });
    assert.deepEqual(paused.filter((e) => e.event !== "usage"), [
      { event: "status", data: { state: "running", session_id: sessionId, pod_name: "hello-pod" } },
      { event: "turn_start", data: { turn } },
      { event: "tool_call_start", data: { id, name: "echo" } },
      { event: "tool_call_args_delta", data: { id, json: args } },
      { event: "tool_call_done", data: { id, name: "echo", arguments: args } },
      { event: "turn_end", data: { turn, result: "paused" } },
      { event: "status", data: { state: "paused", session_id: sessionId, pod_name: "hello-pod", pending: { id, name: "echo", arguments: args } } },
    ]);

    b.send("run", { input: "another" });
    assert.equal((await b.next("error")).data.code, "already_running");
    const resumeFrom = a.events.length;
    b.send("resume");
    await Promise.all([a, b].map((c) => c.waitFor((e) => e.event === "status" && e.data.state === "idle", { from: resumeFrom })));
    const resumed = a.events.slice(resumeFrom);
    assert.deepEqual(shape(resumed), ["status", "turn_start", "tool_result", "text_delta*", "usage", "text_done", "turn_end", "status"]);
    assert.deepEqual(resumed[1]?.data, { turn });
    const result = resumed.find((e) => e.event === "tool_result")!;
    assert.equal(result.data.id, id);
    assert.equal(result.data.is_error, false);
    assert.match(String(result.data.output), /Echo: hi/);
    assert.equal(text(resumed), DEMO_SENTENCE);
    assert.deepEqual(resumed.find((e) => e.event === "turn_end")?.data, { turn, result: "finished" });
    // The refusal went to its sender only; both listeners saw the same turn.
    assert.equal(a.events.some((e) => e.event === "error"), false);
    assert.deepEqual(b.events.slice(fromB).filter((e) => e.event !== "error"), a.events.slice(fromA));

    a.send("get_history");
    const items = (await a.next("history")).data.items as Array<{ role: string; content: string; tool_calls?: Array<{ name: string }> }>;
    const last = items.slice(-4);
    assert.deepEqual(last.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
    assert.equal(last[0]?.content, `${DEMO_TOOL_TRIGGER} hi`);
    assert.equal(last[1]?.tool_calls?.[0]?.name, "echo");
    assert.equal(last[3]?.content, DEMO_SENTENCE);
    await Promise.all([a.close(), b.close()]);
  });

  it("cancel while paused declines the call and ends the turn; the history is unchanged", async () => {
    const a = await PodSocketClient.listening(pod.socketPath);
    a.send("get_history");
    const before = ((await a.next("history")).data.items as unknown[]).length;
    const from = a.events.length;
    a.send("run", { input: `${DEMO_TOOL_TRIGGER} no` });
    await a.waitFor((e) => e.event === "status" && e.data.state === "paused", { from });
    const turn = a.events.slice(from).find((e) => e.event === "turn_start")?.data.turn as number;
    const cancelFrom = a.events.length;
    a.send("cancel");
    await a.waitFor((e) => e.event === "status", { from: cancelFrom });
    assert.deepEqual(a.events.slice(cancelFrom), [
      { event: "tool_result", data: { id: `call_${turn}_1`, output: "declined: the turn was cancelled", is_error: true } },
      { event: "turn_end", data: { turn, result: "finished", reason: "cancelled" } },
      { event: "status", data: { state: "idle", session_id: sessionId, pod_name: "hello-pod" } },
    ]);
    a.send("resume");
    assert.deepEqual((await a.next("error")).data, { code: "not_running", message: "No turn is running or paused" });
    a.send("get_history");
    assert.equal(((await a.next("history")).data.items as unknown[]).length, before);
    await a.close();
  });

  it("local-ai pod --run exits 3 when the turn paused, 1 when its run is refused", async () => {
    const paused = new CliProcess(["pod", "--socket", pod.socketPath, "--run", `${DEMO_TOOL_TRIGGER} hi`], { cwd: pod.dir });
    assert.equal((await paused.exited).code, 3, paused.stderr);
    assert.match(paused.stdout, /-> echo \{"message":"hi"\} \[call_\d+_1\]\n\[turn \d+ paused: type resume to approve, cancel to decline\]/);
    // While paused a second --run is refused: exit 1.
    const refused = new CliProcess(["pod", "--socket", pod.socketPath, "--run", "hello"], { cwd: pod.dir });
    assert.equal((await refused.exited).code, 1);
    assert.match(refused.stdout, /\[error already_running\]/);
    const client = await PodSocketClient.listening(pod.socketPath);
    client.send("cancel");
    await client.waitFor((e) => e.event === "status" && e.data.state === "idle");
    await client.close();
  });

  it("a second serve-socket on the live socket exits 1 with one line; the first keeps serving", async () => {
    const second = new CliProcess(["serve-socket", "--config", pod.configPath], { cwd: pod.dir });
    const { code } = await second.exited;
    assert.equal(code, 1);
    assert.equal(second.stderr, `local-ai serve-socket: another pod is already serving ${pod.socketPath}\n`);
    const client = await PodSocketClient.listening(pod.socketPath);
    await client.close();
  });

  it("SIGTERM: exit 0, no socket file, no MCP server left behind", async () => {
    const children = await childrenOf(pod.proc.child.pid!);
    assert.ok(children.length > 0, "the MCP server should be running");
    const client = await PodSocketClient.listening(pod.socketPath);
    pod.proc.kill("SIGTERM");
    await client.closed;
    assert.equal((await pod.proc.exited).code, 0, pod.proc.stderr);
    assert.equal(existsSync(pod.socketPath), false);
    for (const pid of children) assert.equal(alive(pid), false, `child ${pid} survived`);
  });
});
