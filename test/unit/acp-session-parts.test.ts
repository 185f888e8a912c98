// The stateful parts behind ACP sessions: "always" answers remembered per session, a session's
// composed tools, per-turn tools in the SessionRunner, the session catalog on disk, and the
// request gate that bounds reading and shutdown.
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { pino } from "pino";
import type { AgentContext, RequestPermissionRequest, RequestPermissionResponse } from "@agentclientprotocol/sdk";
import { permissionAsker, permissionKey } from "../../src/acp/acp-permission.js";
import { AcpSession } from "../../src/acp/acp-session.js";
import { AcpTurnUpdates } from "../../src/acp/acp-updates.js";
import { RequestGate } from "../../src/acp/request-gate.js";
import type { ApprovalRequest } from "../../src/agent/events.js";
import { FileSessionCatalog } from "../../src/store/file-session-catalog.js";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { CompositeToolProvider } from "../../src/tools/composite-tool-provider.js";
import { agentHarness } from "../helpers/agent-harness.js";
import { ScriptedToolProvider } from "../helpers/mcp-scripted-tools.js";
import { callTool, say, ScriptedEngine } from "../helpers/scripted-engine.js";

const silent = pino({ level: "silent" });

/** A stand-in for the SDK's AgentContext: records notifications, answers permission requests by a script. */
function fakeClient(answer: (request: RequestPermissionRequest, signal: AbortSignal | undefined) => Promise<RequestPermissionResponse>): { client: AgentContext; asked: RequestPermissionRequest[]; notified: unknown[] } {
  const asked: RequestPermissionRequest[] = [];
  const notified: unknown[] = [];
  const client = {
    request: (_method: string, params: RequestPermissionRequest, options?: { cancellationSignal?: AbortSignal }) => {
      asked.push(params);
      return answer(params, options?.cancellationSignal);
    },
    notify: async (_method: string, params: unknown) => {
      notified.push(params);
    },
  } as unknown as AgentContext;
  return { client, asked, notified };
}

const request = (tool: string, args: Record<string, unknown> = {}, callId = "c"): ApprovalRequest => ({ tool, args, server: "s", step: 0, call_id: callId });
const selected = (optionId: string) => async (): Promise<RequestPermissionResponse> => ({ outcome: { outcome: "selected", optionId } });

describe("permissionAsker: session/request_permission as the approval callback", () => {
  it("allow/reject once ask every time; allow/reject always are remembered for the session, per tool", async () => {
    let next = "allow_once";
    const { client, asked, notified } = fakeClient(async () => selected(next)());
    const session = new AcpSession("s1", "/ws", new ScriptedToolProvider([]), client, silent);
    const ask = permissionAsker(session, new AcpTurnUpdates("/ws", null), silent);
    const signal = new AbortController().signal;
    assert.equal(await ask(request("write_file", {}, "a"), signal), "approve");
    next = "reject_once";
    assert.equal(await ask(request("write_file", {}, "b"), signal), "decline");
    next = "allow_always";
    assert.equal(await ask(request("write_file", {}, "c"), signal), "approve");
    next = "reject_always";
    assert.equal(await ask(request("write_file", {}, "d"), signal), "approve", "remembered: not asked");
    assert.equal(await ask(request("delete_file", {}, "e"), signal), "decline");
    next = "allow_once";
    assert.equal(await ask(request("delete_file", {}, "f"), signal), "decline", "remembered rejection");
    assert.deepEqual(asked.map((a) => a.toolCall.toolCallId), ["a", "b", "c", "e"]);
    assert.deepEqual(asked[0]?.options.map((o) => [o.optionId, o.kind]), [["allow_once", "allow_once"], ["allow_always", "allow_always"], ["reject_once", "reject_once"], ["reject_always", "reject_always"]]);
    // Each asked call was announced (tool_call, pending) before its question.
    await session.updates.flushed();
    assert.deepEqual((notified as Array<{ update: { toolCallId: string; status: string } }>).map((n) => `${n.update.toolCallId}:${n.update.status}`), ["a:pending", "b:pending", "c:pending", "e:pending"]);
  });

  it("run_command is remembered per command line, not for every command", () => {
    assert.equal(permissionKey(request("write_text_file", { path: "a" })), permissionKey(request("write_text_file", { path: "b" })));
    assert.notEqual(permissionKey(request("run_command", { command: "npm", args: ["test"] })), permissionKey(request("run_command", { command: "rm", args: ["-rf", "/"] })));
    assert.equal(permissionKey(request("run_command", { command: "npm", args: ["test"] })), permissionKey(request("run_command", { command: "npm", args: ["test"] })));
  });

  it("declines on a cancelled outcome, an option that was not offered, or a client that fails; a cancel withdraws the question", async () => {
    const cases: Array<() => Promise<RequestPermissionResponse>> = [async () => ({ outcome: { outcome: "cancelled" } }), selected("maybe"), async () => Promise.reject(new Error("method not found"))];
    for (const answer of cases) {
      const { client } = fakeClient(answer);
      const session = new AcpSession("s", "/ws", new ScriptedToolProvider([]), client, silent);
      assert.equal(await permissionAsker(session, new AcpTurnUpdates("/ws", null), silent)(request("w"), new AbortController().signal), "decline");
    }
    let withdrawn: AbortSignal | undefined;
    const { client } = fakeClient((_params, signal) => {
      withdrawn = signal;
      return new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(new Error("cancelled")), { once: true }));
    });
    const session = new AcpSession("s", "/ws", new ScriptedToolProvider([]), client, silent);
    const controller = new AbortController();
    const pending = permissionAsker(session, new AcpTurnUpdates("/ws", null), silent)(request("w"), controller.signal);
    controller.abort();
    assert.equal(await pending, "decline");
    assert.equal(withdrawn, controller.signal, "the turn's signal is the question's cancellation signal");
  });
});

describe("CompositeToolProvider: a session's tools", () => {
  it("lists the parts in order with unique names, routes calls, applies the agent's globs to all, closes only what it owns", async () => {
    const config = new ScriptedToolProvider([{ name: "echo", server: "cfg", replies: { content: "config echo" } }]);
    const session = new ScriptedToolProvider([{ name: "echo", server: "remote", replies: { content: "session echo" } }, { name: "add", server: "remote" }]);
    const editor = new ScriptedToolProvider([{ name: "read_text_file", server: "editor", replies: { content: "buffer" } }]);
    const tools = new CompositeToolProvider([{ provider: config, owned: false }, { provider: session, owned: true }, { provider: editor, owned: true }]);
    await tools.start();
    assert.deepEqual(tools.list(["*"]).map((t) => [t.name, t.server, t.remoteName]), [["echo", "cfg", "echo"], ["remote_echo", "remote", "echo"], ["add", "remote", "add"], ["read_text_file", "editor", "read_text_file"]]);
    assert.deepEqual(tools.list(["remote/*", "read_*"]).map((t) => t.name), ["remote_echo", "add", "read_text_file"]);
    assert.equal((await tools.call("remote_echo", {}, {})).content, "session echo");
    assert.equal((await tools.call("echo", {}, {})).content, "config echo");
    assert.equal((await tools.call("read_text_file", {}, {})).content, "buffer");
    assert.match((await tools.call("nope", {}, {})).content, /unknown tool "nope"/);
    await tools.close();
    assert.deepEqual([config.closed, session.closed, editor.closed], [false, true, true], "the config's shared servers outlive a session");
  });
});

describe("SessionRunner: a turn with tools of its own (TurnOptions.tools)", () => {
  it("offers and runs the turn's provider instead of the runner's; events carry call ids and the output; failed results are marked", async () => {
    const engine = new ScriptedEngine([callTool("mine", { x: 1 }, "call-9"), callTool("broken", {}, "call-10"), say("ok")]);
    const runnerTools = new ScriptedToolProvider([{ name: "theirs" }]);
    const turnTools = new ScriptedToolProvider([{ name: "mine", replies: { content: "from the session" } }, { name: "broken", replies: { status: "error", content: "nope" } }]);
    const h = await agentHarness(engine, runnerTools);
    const result = await h.runner.runTurn({ session_id: "own", input: "go" }, { signal: new AbortController().signal, emit: (e) => h.events.push(e), tools: turnTools });
    assert.equal(result.response, "ok");
    assert.deepEqual(engine.requests[0]?.tools?.map((t) => t.name), ["mine", "broken"]);
    assert.deepEqual([runnerTools.calls.length, turnTools.calls.map((c) => c.name)], [0, ["mine", "broken"]]);
    const done = h.events.filter((e) => e.event === "tool_done");
    assert.deepEqual(done.map((e) => e.event === "tool_done" && [e.call_id, e.status, e.output]), [["call-9", "ok", "from the session"], ["call-10", "error", "nope"]]);
    assert.deepEqual(h.events.filter((e) => e.event === "tool_start").map((e) => e.event === "tool_start" && e.call_id), ["call-9", "call-10"]);
    assert.deepEqual(h.events.find((e) => e.event === "final"), { event: "final", step: 2, response: "ok", finish_reason: "stop" });
    const stored = (await h.runner.history("own")).filter((m) => m.role === "tool");
    assert.deepEqual(stored.map((m) => m.role === "tool" && [m.tool_call_id, m.is_error]), [["call-9", undefined], ["call-10", true]]);
  });
});

describe("a refusal (finish content_filter)", () => {
  it("is on the final event and in the outcome of both turn kinds (the OpenAI-shaped callers map it to stop)", async () => {
    const refuse = [{ type: "text" as const, delta: "no" }, { type: "end" as const, finishReason: "content_filter" as const }];
    const h = await agentHarness(new ScriptedEngine([refuse, refuse]), new ScriptedToolProvider([]));
    const { events, result } = await h.turn({ session_id: "r", input: "x" });
    assert.equal(events.find((e) => e.event === "final" && e.finish_reason === "content_filter") !== undefined, true);
    assert.equal(result.finish_reason, "content_filter");
    const stateless = await h.runner.runStateless({ messages: [{ role: "user", content: "x" }] }, { signal: new AbortController().signal, emit: () => undefined });
    assert.equal(stateless.finish_reason, "content_filter");
  });
});

describe("FileSessionCatalog: session meta on disk", () => {
  it("writes, reads and lists meta; a session without meta or with a damaged file is left out, never fatal", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "local-ai-catalog-"));
    const store = new FileSessionStore(dir);
    const catalog = new FileSessionCatalog(dir, store, silent);
    const meta = { version: 1 as const, cwd: "/ws", title: "Hello", created_at: "2026-01-01T00:00:00.000Z", updated_at: "2026-01-02T00:00:00.000Z" };
    assert.equal(await catalog.readMeta("default_user", "s1"), null);
    assert.equal(await catalog.exists("default_user", "s1"), false);
    await catalog.writeMeta("default_user", "s1", meta);
    assert.deepEqual(await catalog.readMeta("default_user", "s1"), meta);
    assert.equal(await catalog.exists("default_user", "s1"), true);
    await store.appendTurn("default_user", "plain", { trace_id: "t", agent: "a", at: "x", messages: [] });
    await catalog.writeMeta("default_user", "broken", meta);
    await writeFile(path.join(dir, "sessions", "default_user", "broken", "session.json"), "{not json");
    assert.deepEqual(await catalog.listMeta("default_user"), [{ sessionId: "s1", meta }]);
    assert.equal(await catalog.exists("default_user", "plain"), true);
  });
});

describe("RequestGate", () => {
  it("counts requests until their answer, by id, and releases waiters at the limit and at zero", async () => {
    const gate = new RequestGate(2);
    gate.received(1);
    gate.received("a");
    let below = false;
    const waiting = gate.belowLimit().then(() => (below = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(below, false);
    gate.answered(99);
    assert.equal(gate.size, 2, "an answer to no open request changes nothing");
    gate.answered(1);
    await waiting;
    let settled = false;
    const all = gate.settled().then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false);
    gate.answered("a");
    await all;
    assert.equal(gate.size, 0);
  });
});
