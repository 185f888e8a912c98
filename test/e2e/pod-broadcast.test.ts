// Seed 004: every event goes to every listener. A get_status or get_history from one socket client
// is answered to all of them, in the same place among the turn's events (issue 24 section 1).
// `openai` engine over a scripted upstream whose step hangs, so the answers land mid-turn.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { configYaml, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { startPod, type PodProcess } from "../helpers/pod-process.js";
import { PodSocketClient, type PodMessage } from "../helpers/pod-socket-client.js";

let upstream: AgentUpstream;
let pod: PodProcess;

before(async () => {
  upstream = await startAgentUpstream();
  pod = await startPod(
    configYaml({
      llama: { models: { default: { ...openaiModel(upstream.baseUrl, "test-model"), ctx_size: 8192 } } },
      stdio: { coalesce_ms: 0 },
      agents: { assistant: { temperature: 0 } },
    }),
    ["--name", "hello-pod"],
  );
});

after(async () => {
  pod?.proc.kill("SIGKILL");
  await upstream?.close();
});

const isIdle = (e: PodMessage): boolean => e.event === "status" && e.data.state === "idle";

describe("serve-socket: status and history answers are broadcast", () => {
  for (const count of [2, 10]) {
    it(`${count} clients: a get_status and a get_history from one client reach all, at the same place in the turn`, async () => {
      const clients = await PodSocketClient.listeningAll(pod.socketPath, count);
      const from = clients.map((c) => c.events.length);
      const asker = clients[count - 1]!;
      upstream.push({ hang: ["thinking"] });
      clients[0]!.send("run", { input: "a long one" });
      await Promise.all(clients.map((c, i) => c.waitFor((e) => e.event === "text_delta", { from: from[i]! })));
      asker.send("get_status");
      await Promise.all(clients.map((c, i) => c.waitFor((e) => e.event === "status" && e.data.state === "running", { from: from[i]! + 3 })));
      clients[1]!.send("get_history");
      await Promise.all(clients.map((c, i) => c.waitFor((e) => e.event === "history", { from: from[i]! })));
      asker.send("cancel");
      await Promise.all(clients.map((c, i) => c.waitFor(isIdle, { from: from[i]! })));
      const seen = clients.map((c, i) => c.events.slice(from[i]));
      const first = seen[0]!;
      assert.deepEqual(first.map((e) => e.event), ["status", "turn_start", "text_delta", "status", "history", "turn_end", "status"]);
      assert.deepEqual(first[3], { event: "status", data: { state: "running", session_id: first[0]!.data.session_id, pod_name: "hello-pod" } });
      assert.ok(Array.isArray(first[4]!.data.items));
      assert.deepEqual(first[5]!.data, { turn: first[1]!.data.turn, result: "finished", reason: "cancelled" });
      for (let i = 1; i < count; i++) assert.deepEqual(seen[i], first, `client ${i} saw another sequence`);
      await Promise.all(clients.map((c) => c.close()));
    });
  }

  it("a refusal or a bad line still goes to its sender only", async () => {
    const [sender, other] = (await PodSocketClient.listeningAll(pod.socketPath, 2)) as [PodSocketClient, PodSocketClient];
    const otherFrom = other.events.length;
    sender.send("cancel");
    assert.equal((await sender.next("error")).data.code, "not_running");
    sender.sendRaw("not json\n");
    assert.equal((await sender.next("error")).data.message, "invalid request: the line is not JSON");
    // A get_status after them: once the other client has its answer, nothing else came before it.
    sender.send("get_status");
    await other.waitFor((e) => e.event === "status", { from: otherFrom });
    assert.deepEqual(other.events.slice(otherFrom).map((e) => e.event), ["status"]);
    await Promise.all([sender.close(), other.close()]);
  });
});
