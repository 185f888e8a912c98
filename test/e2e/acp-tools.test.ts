// serve-stdio --protocol acp, driven by the official SDK's client side as an editor drives it, on a
// scripted OpenAI upstream (the `openai` engine) so every tool call is known exactly: the editor's
// own file and terminal tools, approvals through session/request_permission, and MCP servers
// passed in session/new (stdio and Streamable HTTP, real servers from npm).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, readdir, realpath } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { methods, type PromptResponse, type SessionUpdate } from "@agentclientprotocol/sdk";
import { AcpEditor, choose, statusTrail, toolUpdates, type ToolUpdate } from "../helpers/acp-editor.js";
import { openaiModelYaml, startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { closedPort } from "../helpers/openai-sse-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

const require = createRequire(import.meta.url);
const packageFile = (pkg: string, file: string): string => path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
const EVERYTHING = packageFile("@modelcontextprotocol/server-everything", "dist/index.js");
const FILESYSTEM = packageFile("@modelcontextprotocol/server-filesystem", "dist/index.js");

const upstreams: AgentUpstream[] = [];
after(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
});

async function workspace(): Promise<string> {
  return realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));
}

async function editorOn(upstream: AgentUpstream, extraYaml = "", agentLines: string[] = []): Promise<AcpEditor> {
  upstreams.push(upstream);
  const { dir, configPath } = await tempConfig(`${openaiModelYaml(upstream.baseUrl, agentLines)}${extraYaml}`);
  return new AcpEditor(["--config", configPath], { cwd: dir });
}

async function finish(editor: AcpEditor): Promise<void> {
  assert.equal((await editor.close()).code, 0, editor.stderr);
  assert.deepEqual(editor.stdoutViolations(), []);
}

const contentText = (update: ToolUpdate | undefined): string =>
  (update?.content ?? []).map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : "")).join("");

const prompt = (editor: AcpEditor, sessionId: string, text: string): Promise<PromptResponse> =>
  editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

describe("ACP: the editor's own tools (fs and terminal), carried out by the client", () => {
  it("reads the editor's buffer, writes through the editor after asking, refuses paths outside cwd, runs a command in the editor's terminal", async () => {
    const upstream = await startAgentUpstream([
      { call: { id: "c1", name: "read_text_file", arguments: { path: "notes.txt" } } },
      { call: { id: "c2", name: "write_text_file", arguments: { path: "out/answer.txt", content: "42\n" } } },
      { call: { id: "c3", name: "read_text_file", arguments: { path: "../escape.txt" } } },
      { call: { id: "c4", name: "run_command", arguments: { command: process.execPath, args: ["-e", "console.log('from the terminal')"] } } },
      { text: ["done"] },
    ]);
    const editor = await editorOn(upstream);
    const ws = await workspace();
    await editor.initialize();
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    // Unsaved in the editor: not on disk, so the answer can only have come from the client.
    editor.buffers.set(path.join(ws, "notes.txt"), "unsaved buffer text");
    let seenBeforePermission: SessionUpdate[] = [];
    editor.permissionPolicy = () => {
      seenBeforePermission = editor.updates(sessionId);
      return choose("allow_once");
    };
    const response = await prompt(editor, sessionId, "use the files");
    assert.equal(response.stopReason, "end_turn");
    assert.equal(editor.text(sessionId), "done");

    // read_text_file: the editor's buffer went to the model; no permission needed to read.
    assert.deepEqual(editor.reads.map((r) => r.path), [path.join(ws, "notes.txt")], "the escaping read never reached the editor");
    assert.equal(toolResultSent(upstream, "c1"), "unsaved buffer text");
    const read = toolUpdates(editor, sessionId, "c1");
    assert.deepEqual(statusTrail(read), ["tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed"]);
    assert.equal(read[0]?.sessionUpdate === "tool_call" && read[0].kind, "read");
    assert.equal(read[0]?.title, "Read notes.txt");
    assert.deepEqual(read[0]?.rawInput, { path: "notes.txt" });
    assert.deepEqual(read[0]?.locations, [{ path: path.join(ws, "notes.txt") }]);
    assert.equal(contentText(read[2]), "unsaved buffer text");

    // write_text_file: announced, asked, then written by the editor (not by us on disk).
    assert.equal(editor.permissions.length, 2, "write and run each asked once");
    const writeAsk = editor.permissions[0]?.request;
    assert.equal(writeAsk?.toolCall.toolCallId, "c2");
    assert.equal(writeAsk?.toolCall.kind, "edit");
    assert.deepEqual(writeAsk?.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once", "reject_always"]);
    assert.ok(seenBeforePermission.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "c2" && u.status === "pending"), "the call is announced before the question");
    assert.deepEqual(editor.writes, [{ sessionId, path: path.join(ws, "out/answer.txt"), content: "42\n" }]);
    assert.equal(existsSync(path.join(ws, "out/answer.txt")), false);
    assert.deepEqual(statusTrail(toolUpdates(editor, sessionId, "c2")), ["tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed"]);

    // A path outside cwd: refused before the editor is asked; the model is told why.
    assert.deepEqual(statusTrail(toolUpdates(editor, sessionId, "c3")), ["tool_call:failed"]);
    assert.match(String(toolResultSent(upstream, "c3")), /outside the session's working directory/);

    // run_command: asked, run in the editor's terminal in cwd, output and exit code to the model.
    assert.equal(editor.permissions[1]?.request.toolCall.kind, "execute");
    assert.deepEqual(editor.terminals.created.map((t) => ({ command: t.command, args: t.args, cwd: t.cwd })), [
      { command: process.execPath, args: ["-e", "console.log('from the terminal')"], cwd: ws },
    ]);
    assert.equal(toolResultSent(upstream, "c4"), "exit code 0\nfrom the terminal\n");
    assert.deepEqual(editor.terminals.released, ["term-1"]);

    // The model was offered the editor's tools (the client advertised fs and terminal).
    const offered = (upstream.chats()[0]?.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    assert.deepEqual(offered, ["read_text_file", "write_text_file", "run_command"]);
    await finish(editor);
  });

  it("offers no editor tools to a client that advertised none", async () => {
    const upstream = await startAgentUpstream([{ text: ["plain"] }]);
    const editor = await editorOn(upstream);
    await editor.initialize({});
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: await workspace(), mcpServers: [] });
    assert.equal((await prompt(editor, sessionId, "hi")).stopReason, "end_turn");
    assert.equal((upstream.chats()[0]?.body as { tools?: unknown }).tools, undefined);
    await finish(editor);
  });
});

describe("ACP: approvals through session/request_permission (config MCP server, server-filesystem)", () => {
  it("reject runs nothing, allow once runs once, allow always is remembered for the session", async () => {
    const ws = await workspace();
    const call = (id: string, file: string): { call: { id: string; name: string; arguments: Record<string, unknown> } } => ({
      call: { id, name: "write_file", arguments: { path: path.join(ws, file), content: file } },
    });
    const upstream = await startAgentUpstream([call("w1", "a.txt"), { text: ["declined"] }, call("w2", "b.txt"), { text: ["written"] }, call("w3", "c.txt"), { text: ["always"] }, call("w4", "d.txt"), { text: ["again"] }]);
    const mcp = ["mcp:", "  servers:", "    files:", `      command: ${JSON.stringify(process.execPath)}`, `      args: [${JSON.stringify(FILESYSTEM)}, ${JSON.stringify(ws)}]`, "      requires_approval: [write_file]", ""].join("\n");
    const editor = await editorOn(upstream, mcp, ['    tools: ["write_file"]']);
    await editor.initialize({});
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });

    editor.permissionPolicy = () => choose("reject_once");
    assert.equal((await prompt(editor, sessionId, "write a")).stopReason, "end_turn");
    assert.equal(existsSync(path.join(ws, "a.txt")), false, "a rejected call never runs");
    assert.deepEqual(statusTrail(toolUpdates(editor, sessionId, "w1")), ["tool_call:pending", "tool_call_update:failed"]);
    assert.match(String(toolResultSent(upstream, "w1")), /declined/);

    editor.permissionPolicy = () => choose("allow_once");
    await prompt(editor, sessionId, "write b");
    assert.equal(await readFile(path.join(ws, "b.txt"), "utf8"), "b.txt");
    assert.deepEqual(statusTrail(toolUpdates(editor, sessionId, "w2")), ["tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed"]);

    editor.permissionPolicy = () => choose("allow_always");
    await prompt(editor, sessionId, "write c");
    assert.equal(editor.permissions.length, 3);
    editor.permissionPolicy = () => assert.fail("allow_always was not remembered");
    await prompt(editor, sessionId, "write d");
    assert.equal(editor.permissions.length, 3, "not asked again in this session");
    assert.equal(await readFile(path.join(ws, "d.txt"), "utf8"), "d.txt");
    assert.equal(editor.permissions[0]?.request.toolCall.title?.startsWith("write_file"), true);
    await finish(editor);
  });
});

/** server-everything over Streamable HTTP or the older HTTP+SSE on a free port; resolves once it listens. */
async function everythingOverHttp(transport: "streamableHttp" | "sse"): Promise<{ url: string; stop: () => void }> {
  const port = await closedPort();
  const child = spawn(process.execPath, [EVERYTHING, transport], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  after(() => void child.kill("SIGKILL"));
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
      if (/listening|running on port/.test(stderr)) resolve();
    });
    child.on("exit", () => reject(new Error(`server-everything (http) exited: ${stderr}`)));
  });
  return { url: `http://127.0.0.1:${port}/${transport === "sse" ? "sse" : "mcp"}`, stop: () => child.kill("SIGTERM") };
}

/** Pids of the direct children of `pid` whose command line mentions `needle` (Linux /proc). */
async function childrenMatching(pid: number, needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc").catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(ppid) !== pid || state === "Z") continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(needle)) found.push(Number(entry));
  }
  return found;
}

describe("ACP: MCP servers passed in session/new (server-everything over stdio, Streamable HTTP and SSE)", () => {
  it("are started for the session, their tools are used (after asking), and stop when the session closes", async () => {
    const [http, sse] = await Promise.all([everythingOverHttp("streamableHttp"), everythingOverHttp("sse")]);
    const upstream = await startAgentUpstream([
      { call: { id: "e1", name: "echo", arguments: { message: "over stdio" } } },
      { call: { id: "e2", name: "remote_echo", arguments: { message: "over http" } } },
      { call: { id: "e3", name: "legacy_echo", arguments: { message: "over sse" } } },
      { text: ["all echoed"] },
    ]);
    const editor = await editorOn(upstream);
    const ws = await workspace();
    await editor.initialize({});
    const { sessionId } = await editor.agent.request(methods.agent.session.new, {
      cwd: ws,
      mcpServers: [
        { name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"], env: [] },
        { type: "http", name: "remote", url: http.url, headers: [] },
        { type: "sse", name: "legacy", url: sse.url, headers: [] },
      ],
    });
    const response = await prompt(editor, sessionId, "echo three times");
    assert.equal(response.stopReason, "end_turn");
    assert.equal(editor.text(sessionId), "all echoed");
    // Each server offers `echo`: the first keeps the name, the second is scoped by its server name.
    const offered = (upstream.chats()[0]?.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    assert.ok(offered.includes("echo") && offered.includes("remote_echo") && offered.includes("legacy_echo"), offered.join(", "));
    assert.deepEqual(editor.permissions.map((p) => p.request.toolCall.toolCallId), ["e1", "e2", "e3"], "a session's own servers are gated");
    assert.match(String(toolResultSent(upstream, "e1")), /Echo: over stdio/);
    assert.match(String(toolResultSent(upstream, "e2")), /Echo: over http/);
    assert.match(String(toolResultSent(upstream, "e3")), /Echo: over sse/);
    assert.match(contentText(toolUpdates(editor, sessionId, "e2").at(-1)), /Echo: over http/);

    const pid = editor.child.pid as number;
    assert.equal((await childrenMatching(pid, "server-everything")).length, 1, "the stdio server runs while the session is open");
    await editor.agent.request(methods.agent.session.close, { sessionId });
    let gone = false;
    // A bounded poll: a grandchild's exit has no event this process can wait on.
    for (let i = 0; i < 100 && !gone; i++) {
      gone = (await childrenMatching(pid, "server-everything")).length === 0;
      if (!gone) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(gone, "the session's stdio server stopped with the session");
    await assert.rejects(prompt(editor, sessionId, "still there?"), (error: { code?: number }) => error.code === -32002);
    await finish(editor);
    http.stop();
    sse.stop();
  });

  it("stop when the process exits (SIGTERM): no server is left behind", async () => {
    const upstream = await startAgentUpstream([]);
    const editor = await editorOn(upstream);
    await editor.initialize({});
    await editor.agent.request(methods.agent.session.new, { cwd: await workspace(), mcpServers: [{ name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"], env: [] }] });
    const pid = editor.child.pid as number;
    let servers: number[] = [];
    // The session's servers start right after session/new (in the background); a bounded poll of
    // the process tree, the only place a grandchild's start shows.
    for (let i = 0; i < 200 && servers.length === 0; i++) {
      servers = await childrenMatching(pid, "server-everything");
      if (servers.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(servers.length, 1, "the session's server started");
    editor.child.kill("SIGTERM");
    assert.equal((await editor.exited).code, 0, editor.stderr);
    const alive = (p: number): boolean => {
      try {
        process.kill(p, 0);
        return true;
      } catch {
        return false;
      }
    };
    assert.deepEqual(servers.filter(alive), [], "stopped before the process exited");
    editor.connection.close();
    assert.deepEqual(editor.stdoutViolations(), []);
  });
});
