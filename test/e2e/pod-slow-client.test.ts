import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { startPod, stderrIncludes, type PodProcess } from "../helpers/pod-process.js";
import { PodSocketClient, type PodMessage } from "../helpers/pod-socket-client.js";
import { chunk, sendData, sendJsonError, startSse, startUpstream, usageChunk, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";
import { configYaml, openaiModel } from "../helpers/config-yaml.js";

const DELTAS = 20_000;
const piece = (i: number): string => `w${i} `;
const FULL = Array.from({ length: DELTAS }, (_, i) => piece(i)).join("");

let upstream: ScriptedUpstream;
let pod: PodProcess;

before(async () => {
  // An OpenAI-compatible upstream on loopback that streams a 20,000-delta answer: the real openai
  // engine path through the built CLI.
  upstream = await startUpstream((req, res, body) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "test-model", object: "model", created: 1, owned_by: "test" }] }));
      return;
    }
    if (JSON.stringify(body).includes("please fail")) {
      sendJsonError(res, 500, "upstream broke");
      return;
    }
    startSse(res);
    // Paced in batches, as a model streams over time (not one 1 MB write).
    void (async () => {
      for (let i = 0; i < DELTAS; i++) {
        sendData(res, chunk({ content: piece(i) }));
        if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
      }
      sendData(res, chunk({}, "stop"));
      sendData(res, usageChunk(10, DELTAS));
      sendData(res, "[DONE]");
      res.end();
    })();
  });
  // coalesce_ms 0: the test counts deltas one for one (merging would hide a lost one).
  const yaml = configYaml({ stdio: { coalesce_ms: 0 }, llama: { models: { remote: openaiModel(upstream.baseUrl, "test-model") } }, agents: { assistant: { model: "remote" } } });
  // A short stall limit, so the test also sees the stalled client disconnected; a queue with
  // headroom for a loaded CI machine (the stalled client still overflows it).
  pod = await startPod(yaml, [], { LOCAL_AI_POD_STALL_MS: "3000", LOCAL_AI_POD_QUEUE_LINES: "8192" });
});

after(async () => {
  pod?.proc.kill("SIGKILL");
  await upstream?.close();
});

/** Runs one turn from `client` and returns its events and how long the turn took as it saw it. */
async function timedTurn(client: PodSocketClient): Promise<{ events: PodMessage[]; ms: number }> {
  const from = client.events.length;
  client.send("run", { input: "stream" });
  await client.waitFor((e) => e.event === "turn_start", { from });
  const started = performance.now();
  await client.waitFor((e) => e.event === "turn_end", { from });
  const ms = performance.now() - started;
  await client.waitFor((e) => e.event === "status" && e.data.state === "idle", { from });
  return { events: client.events.slice(from), ms };
}

function checkFullTurn(events: PodMessage[]): void {
  const deltas = events.filter((e) => e.event === "text_delta");
  assert.equal(deltas.length, DELTAS, "the reading client lost no delta");
  assert.equal(deltas.map((e) => String(e.data.text)).join(""), FULL);
  assert.deepEqual(events.filter((e) => e.event !== "text_delta").map((e) => e.event), ["status", "turn_start", "usage", "text_done", "turn_end", "status"]);
  assert.deepEqual(events.find((e) => e.event === "text_done")?.data, { text: FULL });
}

describe("serve-socket: a client that never reads (openai engine, 20,000-delta turn)", () => {
  it("does not slow a reading client, loses only deltas, and is disconnected once stalled past the limit", async (t) => {
    const fast = await PodSocketClient.listening(pod.socketPath);
    // The first turn warms up both processes; the second is the baseline.
    checkFullTurn((await timedTurn(fast)).events);
    const alone = await timedTurn(fast);
    checkFullTurn(alone.events);

    const stalled = await PodSocketClient.connect(pod.socketPath, { paused: true });
    // The pod counts it as a listener once the stalled client's status request was answered; it
    // reads nothing, so wait for the pod's side: its get_status reply is queued for it.
    const statuses = (): number => fast.events.filter((e) => e.event === "status").length;
    const before = statuses();
    stalled.send("get_status");
    const probe = await PodSocketClient.listening(pod.socketPath);
    await probe.close();
    // Both answers reach every client (seed 004): the fast one has them before its timed turn.
    await fast.waitFor(() => statuses() >= before + 2);
    const shared = await timedTurn(fast);
    checkFullTurn(shared.events);
    t.diagnostic(`20,000-delta turn seen by the reading client: alone ${alone.ms.toFixed(0)} ms (${((DELTAS / alone.ms) * 1000).toFixed(0)} deltas/s), with a stalled client ${shared.ms.toFixed(0)} ms (${((DELTAS / shared.ms) * 1000).toFixed(0)} deltas/s), ratio ${(shared.ms / alone.ms).toFixed(2)}`);

    await stderrIncludes(pod.proc, "disconnecting client: it read nothing for 3000 ms", 20_000);
    assert.match(pod.proc.stderr, /client is not keeping up; dropping its deltas/);
    // What the stalled client finally reads: its status reply, the turn's structure, some deltas, then EOF.
    stalled.socket.resume();
    await stalled.closed;
    const got = stalled.events;
    assert.equal(got[0]?.event, "status");
    const deltas = got.filter((e) => e.event === "text_delta").length;
    assert.ok(deltas < DELTAS, `the stalled client should have lost deltas (got ${deltas})`);
    t.diagnostic(`stalled client: ${deltas} of ${DELTAS} deltas kept, ${got.length} events in all before the disconnect`);

    fast.send("get_status");
    assert.equal((await fast.next("status")).data.state, "idle");
    await fast.close();
  });
});

describe("serve-socket: a turn that fails in the model backend", () => {
  it("broadcasts provider_error, ends the turn with reason error, and pod --run exits 1", async () => {
    const watcher = await PodSocketClient.listening(pod.socketPath);
    const from = watcher.events.length;
    const run = new CliProcess(["pod", "--socket", pod.socketPath, "--run", "please fail"], { cwd: pod.dir });
    assert.equal((await run.exited).code, 1, run.stderr);
    await watcher.waitFor((e) => e.event === "status" && e.data.state === "idle", { from });
    const events = watcher.events.slice(from);
    assert.deepEqual(events.map((e) => e.event), ["status", "turn_start", "error", "turn_end", "status"]);
    const error = events[2]!;
    assert.equal(error.data.code, "provider_error");
    assert.match(String(error.data.message), /HTTP 500.*upstream broke/);
    assert.deepEqual(events[3]?.data, { turn: events[1]?.data.turn, result: "finished", reason: "error" });
    assert.match(run.stdout, /\[error provider_error\] .*\n\[turn \d+ error\]\n/);
    await watcher.close();
  });
});
