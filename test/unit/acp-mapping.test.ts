// The ACP front door's pure parts: the one AgentEvent -> session/update mapping, the replay of a
// stored conversation, prompt content as turn input, session MCP servers, paths inside cwd, the
// error mapping, and that the seed 000 wires do not carry the fields added for ACP.
import assert from "node:assert/strict";
import { mkdtemp, mkdir, realpath, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { RequestError } from "@agentclientprotocol/sdk";
import { AcpTurnUpdates } from "../../src/acp/acp-updates.js";
import { toRequestError } from "../../src/acp/acp-errors.js";
import { historyUpdates } from "../../src/acp/history-replay.js";
import { promptInput, titleOf } from "../../src/acp/prompt-input.js";
import { sessionMcpServers } from "../../src/acp/session-mcp-servers.js";
import { assertRealInside, resolveInWorkspace } from "../../src/acp/workspace-path.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { toEventFields } from "../../src/wire/agent-event-fields.js";

const CWD = "/work/project";

function mapAll(updates: AcpTurnUpdates, events: AgentEvent[]): unknown[] {
  return events.flatMap((event) => updates.map(event));
}

describe("AcpTurnUpdates: AgentEvents as session/update", () => {
  it("model_load is a one-entry plan the editor shows: pending while queued for memory, in progress while loading, completed once loaded", () => {
    const updates = new AcpTurnUpdates(CWD, null);
    const out = mapAll(updates, [
      { event: "model_load", step: 0, model: "coder", state: "queued" },
      { event: "model_load", step: 0, model: "coder", state: "queued", unloading: ["chat", "embed"] },
      { event: "model_load", step: 0, model: "coder", state: "loading" },
      { event: "model_load", step: 0, model: "coder", state: "loading", progress: 0.4 },
      { event: "model_load", step: 0, model: "coder", state: "loaded" },
    ]);
    const entry = (content: string, status: string): unknown => ({ sessionUpdate: "plan", entries: [{ content, priority: "high", status }] });
    assert.deepEqual(out, [
      entry("Waiting for memory to load model coder", "pending"),
      entry("Waiting for memory to load model coder (unloading chat, embed)", "pending"),
      entry("Loading model coder", "in_progress"),
      entry("Loading model coder (40 %)", "in_progress"),
      entry("Loaded model coder", "completed"),
    ]);
  });

  it("prompt_progress is the same one-entry plan: 'Reading the prompt' in progress, completed at 100 %, the cached part named", () => {
    const out = mapAll(new AcpTurnUpdates(CWD, null), [
      { event: "prompt_progress", step: 0, processed: 1408, total: 6021, cached: 0 },
      { event: "prompt_progress", step: 0, processed: 4500, total: 10000, cached: 1200 },
      { event: "prompt_progress", step: 1, processed: 6021, total: 6021, cached: 0 },
    ]);
    const entry = (content: string, status: string): unknown => ({ sessionUpdate: "plan", entries: [{ content, priority: "high", status }] });
    assert.deepEqual(out, [
      entry("Reading the prompt: 23 % (1,408 of 6,021 tokens)", "in_progress"),
      entry("Reading the prompt: 45 % (4,500 of 10,000 tokens; 1,200 cached)", "in_progress"),
      entry("Reading the prompt: 100 % (6,021 of 6,021 tokens)", "completed"),
    ]);
  });

  it("text and thinking are chunks with a message id per step; usage is usage_update against the context window", () => {
    const updates = new AcpTurnUpdates(CWD, () => 4096);
    const out = mapAll(updates, [
      { event: "run_start", user_input: "hi", trace_id: "t1", session_id: "s", agent: "a" },
      { event: "memory_start", snippets: 0 },
      { event: "llm_start", step: 0 },
      { event: "thinking_chunk", step: 0, delta: "hmm" },
      { event: "llm_chunk", step: 0, delta: "Hel" },
      { event: "llm_chunk", step: 0, delta: "lo" },
      { event: "usage", step: 0, input_tokens: 100, output_tokens: 7 },
      { event: "llm_done", step: 0 },
      { event: "final", step: 0, response: "Hello", finish_reason: "stop" },
    ]);
    assert.deepEqual(out, [
      { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" }, messageId: "t1-0-thought" },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" }, messageId: "t1-0" },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "lo" }, messageId: "t1-0" },
      { sessionUpdate: "usage_update", used: 107, size: 4096 },
    ]);
    assert.deepEqual(new AcpTurnUpdates(CWD, null).map({ event: "usage", step: 0, input_tokens: 1, output_tokens: 1 }), [], "no window known: no usage");
  });

  it("a tool call: announced pending, in_progress when it starts, completed or failed with the output as content", () => {
    const updates = new AcpTurnUpdates(CWD, null);
    const out = mapAll(updates, [
      { event: "tool_start", step: 0, tool: "read_text_file", args: { path: "src/a.ts", line: 3 }, call_id: "c1" },
      { event: "tool_done", step: 0, tool: "read_text_file", status: "ok", preview: "x", retryable: false, ms: 2, call_id: "c1", output: "full output" },
      { event: "tool_start", step: 1, tool: "fetch_url", args: {}, call_id: "c2" },
      { event: "tool_done", step: 1, tool: "fetch_url", status: "timeout", preview: "took too long", retryable: true, ms: 9, call_id: "c2" },
    ]);
    assert.deepEqual(out, [
      { sessionUpdate: "tool_call", toolCallId: "c1", title: "Read src/a.ts", kind: "read", locations: [{ path: "/work/project/src/a.ts", line: 3 }], rawInput: { path: "src/a.ts", line: 3 }, status: "pending" },
      { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress" },
      { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed", content: [{ type: "content", content: { type: "text", text: "full output" } }] },
      { sessionUpdate: "tool_call", toolCallId: "c2", title: "fetch_url", kind: "fetch", locations: [], rawInput: {}, status: "pending" },
      { sessionUpdate: "tool_call_update", toolCallId: "c2", status: "in_progress" },
      { sessionUpdate: "tool_call_update", toolCallId: "c2", status: "failed", content: [{ type: "content", content: { type: "text", text: "took too long" } }] },
    ]);
  });

  it("tool_progress: the running call's content shows the latest report; tools_changed: a notice only where the editor takes notices", () => {
    const updates = new AcpTurnUpdates(CWD, null, true);
    const out = mapAll(updates, [
      { event: "tool_start", step: 0, tool: "count", args: {}, call_id: "p1" },
      { event: "tool_progress", step: 0, tool: "count", progress: 1, total: 3, message: "at 1", call_id: "p1" },
      { event: "tool_progress", step: 0, tool: "count", progress: 2, call_id: "p1" },
      { event: "tool_done", step: 0, tool: "count", status: "ok", preview: "counted", retryable: false, ms: 5, call_id: "p1" },
      { event: "tools_changed", step: 1, server: "proto", tools: ["unlock", "secret"] },
      { event: "tools_changed", step: 1, server: "gone", tools: [] },
    ]);
    assert.deepEqual(out.slice(2), [
      { sessionUpdate: "tool_call_update", toolCallId: "p1", content: [{ type: "content", content: { type: "text", text: "at 1 (1/3)" } }] },
      { sessionUpdate: "tool_call_update", toolCallId: "p1", content: [{ type: "content", content: { type: "text", text: "2" } }] },
      { sessionUpdate: "tool_call_update", toolCallId: "p1", status: "completed", content: [{ type: "content", content: { type: "text", text: "counted" } }] },
      { sessionUpdate: "notice", severity: "info", title: "MCP server proto changed its tools", description: "Tools now: unlock, secret" },
      { sessionUpdate: "notice", severity: "info", title: "MCP server gone changed its tools", description: "It offers no tools now." },
    ]);
    assert.deepEqual(new AcpTurnUpdates(CWD, null).map({ event: "tools_changed", step: 1, server: "proto", tools: ["unlock"] }), [], "no notices capability: nothing");
  });

  it("a gated call is announced once, before the question; its tool_start only moves it on; a call that never started is shown failed", () => {
    const updates = new AcpTurnUpdates(CWD, null);
    const asked = updates.permission({ tool: "run_command", args: { command: "npm", args: ["test"] }, server: "editor", step: 0, call_id: "r1" });
    assert.deepEqual(asked.updates, [{ sessionUpdate: "tool_call", toolCallId: "r1", title: "Run npm test", kind: "execute", locations: [], rawInput: { command: "npm", args: ["test"] }, status: "pending" }]);
    assert.equal(asked.toolCall.toolCallId, "r1");
    assert.deepEqual(updates.permission({ tool: "run_command", args: { command: "npm" }, server: "editor", step: 0, call_id: "r1" }).updates, [], "never twice");
    assert.deepEqual(updates.map({ event: "tool_start", step: 0, tool: "run_command", args: {}, call_id: "r1" }), [{ sessionUpdate: "tool_call_update", toolCallId: "r1", status: "in_progress" }]);
    const never = updates.map({ event: "tool_done", step: 1, tool: "nope", status: "error", preview: "invalid tool call: unknown", retryable: true, ms: 0, call_id: "bad", output: "Error: invalid tool call" });
    assert.deepEqual(never, [{ sessionUpdate: "tool_call", toolCallId: "bad", title: "nope", kind: "other", locations: [], status: "failed", content: [{ type: "content", content: { type: "text", text: "Error: invalid tool call" } }] }]);
  });
});

describe("historyUpdates: what session/load replays", () => {
  it("user and agent messages as chunks, each tool call once with its final status; memory preambles stay out", () => {
    const updates = historyUpdates(
      [
        { role: "system", content: "sys" },
        { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }], preamble: "notes from memory" },
        { role: "assistant", content: "", tool_calls: [{ id: "a", name: "echo", arguments: '{"message":"x"}' }, { id: "b", name: "write_text_file", arguments: '{"path":"f.txt","content":"y"}' }] },
        { role: "tool", tool_call_id: "a", name: "echo", content: "Echo: x" },
        { role: "tool", tool_call_id: "b", name: "write_text_file", content: "The user declined to run write_text_file.", is_error: true },
        { role: "assistant", content: "done" },
      ],
      CWD,
    );
    assert.deepEqual(updates, [
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "look" } },
      { sessionUpdate: "user_message_chunk", content: { type: "image", mimeType: "image/png", data: "AAAA" } },
      { sessionUpdate: "tool_call", toolCallId: "a", title: 'echo {"message":"x"}', kind: "other", locations: [], rawInput: { message: "x" }, status: "completed", content: [{ type: "content", content: { type: "text", text: "Echo: x" } }] },
      { sessionUpdate: "tool_call", toolCallId: "b", title: "Write f.txt", kind: "edit", locations: [{ path: "/work/project/f.txt" }], rawInput: { path: "f.txt", content: "y" }, status: "failed", content: [{ type: "content", content: { type: "text", text: "The user declined to run write_text_file." } }] },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } },
    ]);
  });
});

describe("promptInput: content blocks as the turn's input", () => {
  it("text only stays text; an image makes parts; audio is refused naming the block", () => {
    assert.equal(promptInput([{ type: "text", text: "a" }, { type: "text", text: "b" }]), "a\n\nb");
    assert.deepEqual(promptInput([{ type: "text", text: "see" }, { type: "image", mimeType: "image/png", data: "QQ==" }]), [
      { type: "text", text: "see" },
      { type: "image_url", image_url: { url: "data:image/png;base64,QQ==" } },
    ]);
    assert.deepEqual(promptInput([{ type: "resource", resource: { uri: "file:///x.bin", blob: "AA==", mimeType: "application/octet-stream" } }]), "[binary resource file:///x.bin (application/octet-stream), not shown]");
    assert.throws(() => promptInput([{ type: "text", text: "x" }, { type: "audio", mimeType: "audio/wav", data: "AA==" }]), (error: RuntimeError) => error.code === "invalid_params" && error.message.startsWith("prompt[1]: audio"));
    assert.equal(titleOf([{ type: "text", text: `  ${"word ".repeat(30)}` }]), `${"word ".repeat(16).trim().slice(0, 79)}…`);
    assert.equal(titleOf([{ type: "image", mimeType: "image/png", data: "" }]), null);
  });
});

describe("sessionMcpServers: an editor's servers as the session's own", () => {
  it("stdio servers run in the session's cwd, HTTP/SSE become remote servers, all gated, names made unique", () => {
    const specs = sessionMcpServers(
      [
        { name: "my files", command: "/bin/fs-server", args: ["--ro"], env: [{ name: "TOKEN", value: "t" }] },
        { type: "http", name: "my files", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: "Bearer x" }] },
        { type: "sse", name: "", url: "http://127.0.0.1:9/sse", headers: [] },
      ],
      CWD,
    );
    assert.deepEqual(specs, {
      my_files: { command: "/bin/fs-server", args: ["--ro"], env: { TOKEN: "t" }, cwd: CWD, requires_approval: true, timeout_ms: 60_000 },
      my_files_2: { transport: "http", url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer x" }, requires_approval: true, timeout_ms: 60_000, oauth: null },
      server: { transport: "sse", url: "http://127.0.0.1:9/sse", headers: {}, requires_approval: true, timeout_ms: 60_000, oauth: null },
    });
    assert.throws(() => sessionMcpServers([{ type: "http", name: "x", url: "not a url", headers: [] }], CWD), (error: RuntimeError) => error.code === "invalid_params");
  });
});

describe("workspace paths: editor tools stay inside the session's cwd", () => {
  it("resolves relative paths, refuses `..`, other absolute paths and NUL; follows symlinks out of the workspace", async () => {
    assert.equal(resolveInWorkspace(CWD, "src/a.ts"), "/work/project/src/a.ts");
    assert.equal(resolveInWorkspace(CWD, "/work/project/b"), "/work/project/b");
    assert.equal(resolveInWorkspace(CWD, "."), "/work/project");
    for (const bad of ["../x", "/etc/passwd", "/work/project-other/x", "a/../../x", "a\0b"]) {
      assert.throws(() => resolveInWorkspace(CWD, bad), (error: RuntimeError) => error.code === "invalid_params" && /outside the session's working directory/.test(error.message), bad);
    }
    const root = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-ws-")));
    const ws = path.join(root, "ws");
    await mkdir(path.join(root, "secret"), { recursive: true });
    await mkdir(ws);
    await symlink(path.join(root, "secret"), path.join(ws, "link"));
    await assertRealInside(ws, path.join(ws, "new/file.txt"), "new/file.txt");
    await assert.rejects(assertRealInside(ws, path.join(ws, "link/key.txt"), "link/key.txt"), (error: RuntimeError) => error.code === "invalid_params");
  });

  it("follows links whose targets do not exist yet (file, directory, chains, relative and absolute), refuses those that lead out, and bounds loops", async () => {
    const root = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-ws-")));
    const ws = path.join(root, "ws");
    await mkdir(path.join(ws, "sub"), { recursive: true });
    const refused = (given: string, param: "path" | "cwd" = "path"): Promise<void> =>
      assert.rejects(assertRealInside(ws, path.join(ws, given), given, param), (error: RuntimeError) => error.code === "invalid_params" && error.message === `${param} ${JSON.stringify(given)} is outside the session's working directory ${ws}`, given);
    const links: Array<[string, string]> = [
      ["dl", path.join(root, "new.txt")], // dangling file link, absolute target
      ["dldir", path.join(root, "newdir")], // dangling directory link
      ["rel", "../outside.txt"], // dangling, relative target
      ["chain1", "chain2"], // a chain ending outside
      ["chain2", "sub/../dl"],
      ["sub/up", "../../elsewhere/x"], // relative to the link's own folder
      ["inside", "sub/later.txt"], // dangling, but inside
      ["insidedir", "sub/newdir"],
      ["loop1", "loop2"],
      ["loop2", "loop1"],
      ["dotdot", "sub/.."], // a link to a folder, then `..` out of it
    ];
    for (const [link, target] of links) await symlink(target, path.join(ws, link));
    await refused("dl");
    await refused("dldir/x.txt");
    await refused("dldir/deeper/x.txt");
    await refused("rel");
    await refused("chain1");
    await refused("sub/up");
    await refused("dl", "cwd");
    await assertRealInside(ws, path.join(ws, "inside"), "inside");
    await assertRealInside(ws, path.join(ws, "insidedir/x.txt"), "insidedir/x.txt");
    await assertRealInside(ws, path.join(ws, "dotdot/sub/x"), "dotdot/sub/x");
    await assert.rejects(assertRealInside(ws, path.join(ws, "loop1"), "loop1"), (error: RuntimeError) => error.code === "invalid_params" && /more than 40 symbolic links/.test(error.message));
    // A file whose name starts with two dots is inside.
    assert.equal(resolveInWorkspace(ws, "..hidden"), path.join(ws, "..hidden"));
    await assertRealInside(ws, path.join(ws, "..hidden"), "..hidden");
  });
});

describe("toRequestError: RuntimeError codes as ACP's JSON-RPC errors", () => {
  it("uses the standard codes with our code in data, and passes RequestErrors through", () => {
    const mapped = toRequestError(new RuntimeError("invalid_params", "bad cwd", { details: { param: "cwd" } }));
    assert.deepEqual([mapped.code, mapped.message, mapped.data], [-32602, "bad cwd", { code: "invalid_params", details: { param: "cwd" } }]);
    assert.equal(toRequestError(new RuntimeError("config_missing", "no config")).code, -32603);
    assert.equal(toRequestError(new RuntimeError("cancelled", "stop")).code, -32800);
    const notFound = RequestError.sessionNotFound("s");
    assert.equal(toRequestError(notFound), notFound);
    assert.deepEqual(toRequestError(new Error("boom")).data, { code: "internal_error" });
  });
});

describe("the seed 000 wires are unchanged by the ACP fields", () => {
  it("toEventFields leaves out call_id, output and finish_reason", () => {
    assert.deepEqual(toEventFields({ event: "tool_start", step: 0, tool: "t", args: { a: 1 }, call_id: "c" }), { name: "tool_start", fields: { step: 0, tool: "t", args: { a: 1 } } });
    assert.deepEqual(toEventFields({ event: "tool_done", step: 0, tool: "t", status: "ok", preview: "p", retryable: false, ms: 1, call_id: "c", output: "o" }), {
      name: "tool_done",
      fields: { step: 0, tool: "t", status: "ok", preview: "p", retryable: false, ms: 1 },
    });
    assert.deepEqual(toEventFields({ event: "final", step: 2, response: "r", finish_reason: "length" }), { name: "final", fields: { step: 2, response: "r" } });
  });
});
