import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { startPod, startPodIn, type PodProcess } from "../helpers/pod-process.js";
import { PodSocketClient } from "../helpers/pod-socket-client.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";

let pod: PodProcess;
let yaml = "";

before(async () => {
  // The tiny model never stops on its own: a turn runs until cancelled (or 3000 tokens).
  const tiny = await ensureFixture("tiny", { seed: 3 });
  yaml = configYaml({ llama: { models: { tiny: localModel(tiny, { ctx_size: 4096 }) } }, agents: { talker: { model: "tiny", temperature: 0, max_tokens: 3000 } } });
  pod = await startPod(yaml);
});

after(() => pod?.proc.kill("SIGKILL"));

describe("serve-socket: state errors and cancel on a long turn (built CLI, tiny model)", () => {
  it("idle: cancel and resume answer not_running", async () => {
    const client = await PodSocketClient.listening(pod.socketPath);
    client.send("cancel");
    assert.deepEqual((await client.next("error")).data, { code: "not_running", message: "No turn is running or paused" });
    client.send("resume");
    assert.deepEqual((await client.next("error")).data, { code: "not_running", message: "No turn is running or paused" });
    await client.close();
  });

  it("running: run is already_running and resume not_paused (sender only, turn untouched); cancel ends it", async () => {
    const [runner, other] = (await PodSocketClient.listeningAll(pod.socketPath, 2)) as [PodSocketClient, PodSocketClient];
    const from = runner.events.length;
    runner.send("run", { input: "talk" });
    await runner.waitFor((e) => e.event === "text_delta", { from });
    other.send("run", { input: "me too" });
    assert.deepEqual((await other.next("error")).data, { code: "already_running", message: "Pod is already executing a turn" });
    other.send("resume");
    assert.deepEqual((await other.next("error")).data, { code: "not_paused", message: "The turn is running, not paused" });
    other.send("get_status");
    assert.equal((await other.next("status")).data.state, "running");
    // The running turn went on: more text arrived after the refusals, and no error reached the runner.
    const deltasBefore = runner.events.filter((e) => e.event === "text_delta").length;
    await runner.waitFor((e) => e.event === "text_delta", { from: runner.events.length });
    assert.ok(runner.events.filter((e) => e.event === "text_delta").length > deltasBefore);
    assert.equal(runner.events.slice(from).some((e) => e.event === "error"), false);

    const cancelFrom = runner.events.length;
    other.send("cancel");
    await runner.waitFor((e) => e.event === "status" && e.data.state === "idle", { from: cancelFrom });
    const tail = runner.events.slice(cancelFrom).filter((e) => e.event !== "text_delta" && e.event !== "usage");
    const turn = runner.events.slice(from).find((e) => e.event === "turn_start")?.data.turn;
    // The aborted step never completes: no text_done, no error; turn_end says why it ended.
    assert.deepEqual(tail, [
      { event: "turn_end", data: { turn, result: "finished", reason: "cancelled" } },
      { event: "status", data: { state: "idle", session_id: tail.at(-1)?.data.session_id, pod_name: "talker" } },
    ]);
    await Promise.all([runner.close(), other.close()]);
  });

  it("a stale socket file is replaced, and the restarted pod continues the same session", async () => {
    const client = await PodSocketClient.listening(pod.socketPath);
    const sessionId = client.events.at(-1)?.data.session_id;
    await client.close();
    pod.proc.kill("SIGKILL");
    await pod.proc.exited;
    assert.equal(existsSync(pod.socketPath), true, "a killed pod leaves its socket file");
    pod = await startPodIn(pod.dir, pod.configPath);
    const again = await PodSocketClient.listening(pod.socketPath);
    assert.deepEqual(again.events.at(-1)?.data, { state: "idle", session_id: sessionId, pod_name: "talker" });
    await again.close();
  });
});

describe("serve-socket: socket path problems", () => {
  it("a path that is not a socket is refused with one line, and the file is left alone", async () => {
    const file = path.join(pod.dir, "not-a-socket");
    await writeFile(file, "keep me");
    const proc = new CliProcess(["serve-socket", "--config", pod.configPath, "--socket", file], { cwd: pod.dir });
    assert.equal((await proc.exited).code, 1);
    assert.equal(proc.stderr, `local-ai serve-socket: ${file} exists and is not a socket; not replacing it\n`);
    assert.equal(await readFile(file, "utf8"), "keep me");
  });
});
