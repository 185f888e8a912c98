// The Windows Pod handshake through the built CLI, exercised on a Unix socket (the test seam
// LOCAL_AI_POD_TOKEN_HANDSHAKE=1 turns it on there): a client that does not send the token from
// <data_dir>/pod.token first gets nothing and is disconnected; one that does speaks seed 004
// unchanged; `local-ai pod` sends it by itself.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { handshakeLine } from "../../src/pod/pod-token.js";
import { CliProcess } from "../helpers/cli-process.js";
import { configYaml, openaiModel } from "../helpers/config-yaml.js";
import { chunk, scripted, startUpstream, usageChunk, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";
import { startPod, type PodProcess } from "../helpers/pod-process.js";
import { PodSocketClient } from "../helpers/pod-socket-client.js";

const HANDSHAKE = { LOCAL_AI_POD_TOKEN_HANDSHAKE: "1" };
let upstream: ScriptedUpstream;
let pod: PodProcess;
let token: string;

before(async () => {
  upstream = await startUpstream(scripted([chunk({ content: "Hello there" }), chunk({}, "stop"), usageChunk(3, 2)]));
  const yaml = configYaml({ llama: { models: { remote: openaiModel(upstream.baseUrl, "test-model") } }, agents: { greeter: { model: "remote" } } });
  pod = await startPod(yaml, [], HANDSHAKE);
  token = (await readFile(path.join(pod.dir, "data", "pod.token"), "utf8")).trim();
});

after(async () => {
  pod?.proc.kill("SIGKILL");
  await upstream?.close();
});

describe("pod token handshake (Windows mode, on a Unix socket)", () => {
  it("the token file is 64 hex digits", () => {
    assert.match(token, /^[0-9a-f]{64}$/);
  });

  it("a client that sends a method first is disconnected without a single event", async () => {
    const stranger = await PodSocketClient.connect(pod.socketPath);
    stranger.send("get_status");
    await stranger.closed;
    assert.deepEqual(stranger.events, []);
  });

  it("a wrong token: disconnected, nothing sent", async () => {
    const stranger = await PodSocketClient.connect(pod.socketPath);
    stranger.sendRaw(handshakeLine("0".repeat(64)));
    stranger.send("get_status");
    await stranger.closed;
    assert.deepEqual(stranger.events, []);
  });

  it("the token first (in the same write as the first method): the protocol as in seed 004", async () => {
    const client = await PodSocketClient.connect(pod.socketPath);
    client.sendRaw(`${handshakeLine(token)}${JSON.stringify({ method: "get_status" })}\n`);
    const status = await client.next("status");
    assert.equal(status.data.pod_name, "greeter");
    assert.equal(status.data.state, "idle");
    await client.close();
  });

  it("local-ai pod --run sends the token from the data dir and runs the turn", async () => {
    const run = new CliProcess(["pod", "--config", pod.configPath, "--run", "hi"], { cwd: pod.dir, env: HANDSHAKE });
    assert.equal((await run.exited).code, 0, run.stderr);
    assert.match(run.stdout, /\nHello there\n/);
  });
});
