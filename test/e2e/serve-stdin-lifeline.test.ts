// `--exit-on-stdin-eof` (serve-http, serve-socket): a host that spawned the server with a pipe on
// stdin closes it (or dies) mid-request; the server stops as on SIGTERM: exit 0, the request
// finishes (released within the grace) or is cancelled (held past it), no child left behind.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { heldResponse } from "../helpers/held-response.js";
import { startHttpServer } from "../helpers/http-cli-server.js";
import { FIXTURE_SERVER_PATH } from "../helpers/mcp-servers.js";
import { chunk, sendData, startSse, startUpstream, usageChunk, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";
import { startPod, stderrIncludes } from "../helpers/pod-process.js";
import { PodSocketClient } from "../helpers/pod-socket-client.js";
import { allGone, childrenOf } from "../helpers/process-children.js";

let upstream: ScriptedUpstream;
/** The next chat request's hold: it streams "first " and waits for the test's release. */
let hold = heldResponse();

before(async () => {
  upstream = await startUpstream((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "test-model", object: "model", created: 1, owned_by: "test" }] }));
      return;
    }
    startSse(res);
    sendData(res, chunk({ content: "first " }));
    hold.hold(() => {
      sendData(res, chunk({ content: "second" }));
      sendData(res, chunk({}, "stop"));
      sendData(res, usageChunk(5, 2));
      sendData(res, "[DONE]");
      res.end();
    });
  });
});

after(async () => {
  await upstream?.close();
});

/** The remote model plus one MCP server, which is the child that must not outlive the server. */
const yaml = (extra: Record<string, unknown> = {}): string =>
  configYaml({
    ...extra,
    llama: { models: { remote: openaiModel(upstream.baseUrl, "test-model") } },
    agents: { assistant: { model: "remote" } },
    mcp: { servers: { fixture: mcpServer({ command: process.execPath, args: [FIXTURE_SERVER_PATH] }) } },
  });

describe("serve-http --exit-on-stdin-eof", () => {
  it("stdin closed mid-request: the request finishes within the grace, exit 0, the MCP server is gone", async () => {
    hold = heldResponse();
    const server = await startHttpServer(yaml(), ["--exit-on-stdin-eof"], { LOCAL_AI_LOG_LEVEL: "info" });
    const children = await childrenOf(server.proc.child.pid!);
    assert.equal(children.length, 1, `the MCP server runs as our child (${children.join(", ")})`);
    const response = await fetch(`${server.base}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "hi" }], stream: true }),
    });
    assert.equal(response.status, 200);
    const release = await hold.arrived;
    server.proc.endInput();
    await stderrIncludes(server.proc, "stdin closed (--exit-on-stdin-eof)");
    release();
    const body = await response.text();
    const content = body
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => (JSON.parse(line.slice(6)) as { choices: Array<{ delta?: { content?: string } }> }).choices[0]?.delta?.content ?? "")
      .join("");
    assert.equal(content, "first second");
    assert.match(body, /data: \[DONE\]\n/);
    assert.deepEqual(await server.proc.exited, { code: 0, signal: null });
    assert.ok(await allGone(children), "the MCP server is gone");
  });
});

describe("serve-http --exit-on-stdin-eof, the host gone", () => {
  it("stdin, stdout and stderr all closed (as when the host dies): a graceful stop all the same, exit 0, the MCP server is gone", async () => {
    const server = await startHttpServer(yaml(), ["--exit-on-stdin-eof"], { LOCAL_AI_LOG_LEVEL: "info" });
    const children = await childrenOf(server.proc.child.pid!);
    assert.equal(children.length, 1, `the MCP server runs as our child (${children.join(", ")})`);
    // Every log line of the shutdown now meets a closed pipe (EPIPE).
    server.proc.child.stdout.destroy();
    server.proc.child.stderr.destroy();
    server.proc.child.stdin.destroy();
    assert.deepEqual(await server.proc.exited, { code: 0, signal: null });
    assert.ok(await allGone(children), "the MCP server is gone");
  });
});

describe("serve-socket --exit-on-stdin-eof", () => {
  it("stdin closed mid-turn: the turn held past the grace is cancelled, exit 0, the MCP server is gone", async () => {
    hold = heldResponse();
    const pod = await startPod(yaml({ stdio: { shutdown_grace_ms: 200 } }), ["--exit-on-stdin-eof"]);
    await stderrIncludes(pod.proc, "warm-up done");
    const children = await childrenOf(pod.proc.child.pid!);
    assert.equal(children.length, 1, `the MCP server runs as our child (${children.join(", ")})`);
    const client = await PodSocketClient.listening(pod.socketPath);
    client.send("run", { input: "hi" });
    await hold.arrived;
    const request = upstream.requests.at(-1);
    assert.ok(request !== undefined);
    pod.proc.endInput();
    const end = await client.waitFor((e) => e.event === "turn_end");
    assert.equal(end.data.reason, "cancelled");
    assert.equal((await request.closed).finished, false, "the upstream request was aborted, not answered");
    await client.closed;
    assert.deepEqual(await pod.proc.exited, { code: 0, signal: null });
    assert.ok(await allGone(children), "the MCP server is gone");
  });
});
