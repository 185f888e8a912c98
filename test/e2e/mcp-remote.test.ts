import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { after, describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { freePort } from "../helpers/free-port.js";
import { startHttpServer } from "../helpers/http-cli-server.js";
import { startMcpHttpServer, type McpHttpServer } from "../helpers/mcp-http-server.js";
import { openaiModelYaml, startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { closedPort } from "../helpers/openai-sse-upstream.js";
import { runCli } from "../helpers/run-cli.js";
import { tempConfig } from "../helpers/temp-config.js";

/**
 * Remote MCP servers from config.yaml, end to end through the built CLI: a Streamable HTTP server
 * built from the SDK's own server classes (in this process, so the test can stop and restart it),
 * and @modelcontextprotocol/server-everything in its streamableHttp and sse modes. The model is a
 * scripted OpenAI-compatible upstream, so every tool call is known exactly.
 */

const require = createRequire(import.meta.url);
const everything = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js");

const upstreams: AgentUpstream[] = [];
const servers: McpHttpServer[] = [];
const children: ChildProcess[] = [];
after(async () => {
  await Promise.all([...upstreams.map((u) => u.close()), ...servers.map((s) => s.stop())]);
  for (const child of children) child.kill("SIGKILL");
});

const call = (id: string, message: string) => ({ call: { id, name: "echo", arguments: { message } } });

function toolDone(proc: CliProcess, id: string): WireMessage | undefined {
  return proc.messages.find((m) => m.id === id && m.event === "tool_done");
}

/** server-everything in a network mode on a free loopback port, once it says it listens. */
async function startEverything(mode: "streamableHttp" | "sse"): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, [everything, mode], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    let text = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      if (/listening|running/i.test(text)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server-everything ${mode} exited (${code}): ${text}`)));
  });
  return `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`;
}

describe("a remote MCP server (Streamable HTTP) in mcp.servers", { timeout: 120_000 }, () => {
  it("is called from a stdio chat with its headers; a restarted server's session is re-established; a server that is down fails the call naming it, and the next call reconnects", async () => {
    const server = await startMcpHttpServer();
    servers.push(server);
    const upstream = await startAgentUpstream([call("c1", "one"), { text: ["done 1"] }]);
    upstreams.push(upstream);
    const { dir, configPath } = await tempConfig(
      `${openaiModelYaml(upstream.baseUrl, ['    tools: ["echo", "hold"]'])}mcp:\n  servers:\n    remote:\n      url: ${server.url}\n      headers:\n        X-Test: "\${REMOTE_TEST_HEADER}"\n`,
    );
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { REMOTE_TEST_HEADER: "from-env" } });

    const first = await proc.request({ id: "r1", method: "chat", params: { session_id: "remote", input: "echo one" } }, 60_000);
    assert.equal((first.result as { response: string }).response, "done 1", JSON.stringify(first));
    assert.equal(toolDone(proc, "r1")?.status, "ok", `${String(toolResultSent(upstream, "c1"))}\n${proc.stderr.slice(-3000)}`);
    assert.equal(toolResultSent(upstream, "c1"), "remote echo: one");
    assert.ok(server.testHeaders.length > 0 && server.testHeaders.every((value) => value === "from-env"), `the configured header with \${ENV} on every request: ${JSON.stringify(server.testHeaders)}`);
    // The model was offered the remote tool by its own name.
    assert.deepEqual((upstream.chats()[0]?.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name), ["echo", "hold"]);

    // Restarted between calls: the old session is unknown to it (404); the call still succeeds.
    await server.stop();
    await server.start();
    upstream.push(call("c2", "two"), { text: ["done 2"] });
    const second = await proc.request({ id: "r2", method: "chat", params: { session_id: "remote", input: "echo two" } }, 60_000);
    assert.equal((second.result as { response: string }).response, "done 2");
    assert.equal(toolDone(proc, "r2")?.status, "ok", `${String(toolResultSent(upstream, "c2"))}\n${proc.stderr.slice(-3000)}`);
    assert.equal(toolResultSent(upstream, "c2"), "remote echo: two");
    assert.equal(server.initializations, 2, "a new session was initialized");

    // Down: the call fails as a tool error naming the server; the turn goes on.
    await server.stop();
    upstream.push(call("c3", "three"), { text: ["done 3"] });
    const third = await proc.request({ id: "r3", method: "chat", params: { session_id: "remote", input: "echo three" } }, 60_000);
    assert.equal((third.result as { response: string }).response, "done 3");
    assert.equal(toolDone(proc, "r3")?.status, "error");
    // Refused, as a rule; a pooled socket the stop cut may say so instead.
    assert.match(String(toolResultSent(upstream, "c3")), /MCP server "remote" dropped the connection \((server unreachable|connection lost): [^)]+\); it is reconnected for the next call/, proc.stderr.slice(-3000));

    // Back: the next call reconnects.
    await server.start();
    upstream.push(call("c4", "four"), { text: ["done 4"] });
    const fourth = await proc.request({ id: "r4", method: "chat", params: { session_id: "remote", input: "echo four" } }, 60_000);
    assert.equal((fourth.result as { response: string }).response, "done 4");
    assert.equal(toolDone(proc, "r4")?.status, "ok", `${String(toolResultSent(upstream, "c4"))}\n${proc.stderr.slice(-3000)}`);
    assert.equal(toolResultSent(upstream, "c4"), "remote echo: four");
    assert.deepEqual(server.calls, ["echo:one", "echo:two", "echo:four"], "nothing ran twice");

    // Killed while a call runs: that call fails at once naming the server (not at its timeout).
    upstream.push({ call: { id: "c5", name: "hold", arguments: {} } }, { text: ["done 5"] });
    proc.send({ id: "r5", method: "chat", params: { session_id: "remote", input: "hold" } });
    await server.held();
    await server.stop();
    server.release();
    const fifth = await proc.response("r5", 60_000);
    assert.equal((fifth.result as { response: string }).response, "done 5");
    assert.equal(toolDone(proc, "r5")?.status, "error");
    // Cut after the response began (a stream) or before (the POST itself): either way at once, naming the server.
    assert.match(String(toolResultSent(upstream, "c5")), /^Error \(error\): MCP server "remote" dropped the connection \((the server cut the response stream: .*|connection lost: [^)]+)\); it is reconnected for the next call/);

    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
    assert.doesNotMatch(proc.stderr, /from-env/, "header values are never logged");
  });
});

describe("a remote MCP server from serve-http", { timeout: 120_000 }, () => {
  it("runs the agent's remote tool for a chat completion", async () => {
    const server = await startMcpHttpServer();
    servers.push(server);
    const upstream = await startAgentUpstream([call("h1", "over http"), { text: ["done http"] }]);
    upstreams.push(upstream);
    const http = await startHttpServer(`${openaiModelYaml(upstream.baseUrl, ['    tools: ["echo"]'])}mcp:\n  servers:\n    remote:\n      url: ${server.url}\n`);
    try {
      const response = await fetch(`${http.base}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "echo over http" }] }),
      });
      const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
      assert.equal(response.status, 200, JSON.stringify(body));
      assert.equal(body.choices[0]?.message.content, "done http");
      assert.equal(toolResultSent(upstream, "h1"), "remote echo: over http");
      assert.deepEqual(server.calls, ["echo:over http"]);
    } finally {
      assert.equal((await http.stop()).code, 0);
    }
  });
});

describe("local-ai mcp list", { timeout: 120_000 }, () => {
  it("connects to every server and reports transport, state and counts (server-everything over Streamable HTTP, and over SSE through the fallback)", async () => {
    const server = await startMcpHttpServer();
    servers.push(server);
    const [everythingHttp, everythingSse] = await Promise.all([startEverything("streamableHttp"), startEverything("sse")]);
    const down = `http://127.0.0.1:${await closedPort()}/mcp`;
    const { dir, configPath } = await tempConfig(
      `mcp:\n  servers:\n    sdk:\n      url: ${server.url}\n    everything:\n      url: ${everythingHttp}\n      type: http\n    legacy:\n      url: ${everythingSse}\n    down:\n      url: ${down}\n`,
    );
    // Cursor's and Claude Desktop's mcp.json shapes for remote servers, through --mcp-config.
    const mcpJson = path.join(dir, "mcp.json");
    await writeFile(mcpJson, JSON.stringify({ mcpServers: { cursor: { url: server.url }, claude: { type: "http", url: server.url, headers: { "X-Test": "claude" } } } }));
    const run = await runCli(["mcp", "list", "--json", "--config", configPath, "--mcp-config", mcpJson], dir, { timeoutMs: 90_000 });
    assert.equal(run.code, 1, `one server is down: ${run.stderr}`);
    const listed = JSON.parse(run.stdout) as { servers: Array<{ name: string; transport: string; state: string; reason?: string; tools: number; prompts: number; resources: number }> };
    const byName = Object.fromEntries(listed.servers.map((s) => [s.name, s]));
    assert.deepEqual(Object.keys(byName), ["sdk", "everything", "legacy", "down", "cursor", "claude"]);
    assert.deepEqual([byName.cursor?.state, byName.claude?.state, byName.claude?.tools], ["connected", "connected", 3]);
    assert.ok(server.testHeaders.includes("claude"), "the mcp.json entry's headers are sent");
    assert.deepEqual(byName.sdk, { name: "sdk", transport: "http", state: "connected", tools: 3, prompts: 0, resources: 0 });
    for (const name of ["everything", "legacy"]) {
      const entry = byName[name]!;
      assert.equal(entry.state, "connected", JSON.stringify(entry));
      assert.ok(entry.tools >= 5 && entry.prompts >= 1 && entry.resources >= 1, JSON.stringify(entry));
    }
    assert.equal(byName.everything?.transport, "http");
    // No type given and a 4xx to Streamable HTTP: the legacy HTTP+SSE transport took over.
    assert.equal(byName.legacy?.transport, "sse");
    assert.equal(byName.down?.state, "failed");
    assert.match(String(byName.down?.reason), /server "down" failed to start/);

    const table = await runCli(["mcp", "list", "--config", configPath], dir, { timeoutMs: 90_000 });
    assert.match(table.stdout, /^NAME\s+TRANSPORT\s+STATE\s+TOOLS\s+PROMPTS\s+RESOURCES$/m);
    assert.match(table.stdout, /^sdk\s+http\s+connected\s+3\s+0\s+0$/m);
    assert.match(table.stdout, /^down: server "down" failed to start/m);
  });
});
