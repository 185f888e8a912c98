import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import type { ChatMessage } from "../../src/shared/conversation/chat-message.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { agentHarness, eventTrail } from "../helpers/agent-harness.js";
import { ScriptedToolProvider } from "../helpers/mcp-scripted-tools.js";
import { callTool, say, ScriptedEngine } from "../helpers/scripted-engine.js";

const echoSchema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
const echoTool = (extra: Record<string, unknown> = {}) => ({ name: "echo", inputSchema: echoSchema, replies: { content: "echo: hi" }, ...extra });
const lastTool = (messages: ChatMessage[]): string => {
  const tool = [...messages].reverse().find((m) => m.role === "tool");
  return tool?.role === "tool" ? tool.content : "";
};

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof RuntimeError && error.code === code);
}

describe("AgentLoop through the SessionRunner (scripted engine, real store)", () => {
  it("tool call -> tool -> final, with the seed's events in order, persisted", async () => {
    const engine = new ScriptedEngine([callTool("echo", { text: "hi" }), say("It said hi.")]);
    const tools = new ScriptedToolProvider([echoTool()]);
    const h = await agentHarness(engine, tools);
    const { result, events } = await h.turn({ session_id: "s1", input: "echo hi" });
    assert.equal(result.response, "It said hi.");
    assert.deepEqual(result.warnings, []);
    assert.deepEqual(eventTrail(events), [
      "run_start", "memory_start",
      "llm_start@0", "usage@0", "llm_done@0", "tool_start@0", "tool_done@0",
      "llm_start@1", "llm_chunk@1", "usage@1", "llm_done@1", "final@1",
    ]);
    const done = events.find((e) => e.event === "tool_done");
    assert.ok(done?.event === "tool_done");
    assert.equal(done.status, "ok");
    assert.equal(done.preview, "echo: hi");
    assert.equal(done.retryable, false);
    assert.equal(typeof done.ms, "number");
    assert.deepEqual(tools.calls.map((c) => c.args), [{ text: "hi" }]);
    assert.equal(lastTool(engine.requests[1]!.messages), "echo: hi");
    assert.equal(await h.store.sessions.readCheckpoint("default_user", "s1"), null);
    const history = await h.store.sessions.loadHistory("default_user", "s1");
    assert.deepEqual(history.messages.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
  });

  it("re-prompts salvageable parse failures, then aborts with parse_errors as a result", async () => {
    const bad = [callTool("echo", "{not json"), callTool("nope", {}), callTool("echo", { text: 5 })];
    const engine = new ScriptedEngine(bad);
    const tools = new ScriptedToolProvider([echoTool()]);
    const h = await agentHarness(engine, tools, "  max_parse_errors: 2\n");
    const { result, events } = await h.turn({ session_id: "p", input: "go" });
    assert.deepEqual(result.warnings, ["loop_abort: parse_errors"]);
    assert.deepEqual(events.filter((e) => e.event === "tool_done").map((e) => e.event === "tool_done" && e.status), ["error", "error", "error"]);
    assert.deepEqual(events.at(-1), { event: "loop_abort", step: 2, reason: "parse_errors" });
    assert.equal(tools.calls.length, 0, "no invalid call reaches a tool");
    assert.match(lastTool(engine.requests[1]!.messages), /not valid JSON/);
    assert.match(lastTool(engine.requests[2]!.messages), /no tool named "nope"/);
  });

  it("a corrected call after a parse failure goes through", async () => {
    const engine = new ScriptedEngine([callTool("echo", { txt: "hi" }), callTool("echo", { text: "hi" }, "c2"), say("done")]);
    const h = await agentHarness(engine, new ScriptedToolProvider([echoTool()]));
    const { result } = await h.turn({ session_id: "p2", input: "go" });
    assert.equal(result.response, "done");
    assert.deepEqual(result.warnings, []);
  });

  it("stops at max_steps with a result carrying the reason", async () => {
    const engine = new ScriptedEngine([0, 1, 2].map((i) => callTool("echo", { text: "hi" }, `c${i}`)));
    const h = await agentHarness(engine, new ScriptedToolProvider([echoTool()]), "  max_steps: 3\n");
    const { result, events } = await h.turn({ session_id: "m", input: "loop" });
    assert.deepEqual(result.warnings, ["loop_abort: max_steps"]);
    assert.deepEqual(events.at(-1), { event: "loop_abort", step: 2, reason: "max_steps" });
  });

  it("cancel during generation answers cancelled and keeps the turn resumable", async () => {
    const engine = new ScriptedEngine([[{ type: "text", delta: "a" }, { type: "text", delta: "b" }, { type: "text", delta: "c" }, { type: "end", finishReason: "stop" }], say("resumed answer")], 50);
    const h = await agentHarness(engine, new ScriptedToolProvider([]));
    const controller = new AbortController();
    // Abort once the answer is streaming (not on a timer that races the turn's setup).
    const onEvent = (event: { event: string }): void => {
      if (event.event === "llm_chunk") controller.abort();
    };
    await rejectsWith(h.turn({ session_id: "c", input: "long" }, controller.signal, { onEvent }), "cancelled");
    const checkpoint = await h.store.sessions.readCheckpoint("default_user", "c");
    assert.equal(checkpoint?.status, "running");
    const { result } = await h.turn({ session_id: "c", resume: true });
    assert.equal(result.response, "resumed answer");
    assert.equal(result.trace_id, checkpoint?.trace_id);
  });

  it("cancel during a tool call aborts the tool quickly", async () => {
    const engine = new ScriptedEngine([callTool("echo", { text: "hi" })]);
    const tools = new ScriptedToolProvider([echoTool({ replies: { content: "late", delayMs: 10_000 } })]);
    const h = await agentHarness(engine, tools);
    const controller = new AbortController();
    let started = 0;
    // Abort once the tool is running (not on a timer that races the turn's setup).
    const onEvent = (event: { event: string }): void => {
      if (event.event === "tool_start") {
        started = Date.now();
        setImmediate(() => controller.abort());
      }
    };
    await rejectsWith(h.turn({ session_id: "t", input: "go" }, controller.signal, { onEvent }), "cancelled");
    assert.ok(started > 0 && Date.now() - started < 2000, "the 10 s tool was abandoned at once");
    const done = h.events.find((e) => e.event === "tool_done");
    assert.ok(done?.event === "tool_done" && done.status === "cancelled");
  });

  it("a tool that needs approval pauses the turn; resume with approval runs it", async () => {
    const engine = new ScriptedEngine([callTool("write", { text: "x" }), say("written")]);
    const tools = new ScriptedToolProvider([{ name: "write", inputSchema: echoSchema, requiresApproval: true, replies: { content: "ok" } }]);
    const h = await agentHarness(engine, tools);
    const first = await h.turn({ session_id: "a", input: "write x" });
    assert.deepEqual(first.result.warnings, ["approval_required: write"]);
    assert.deepEqual(first.result.pending_approval, { tool: "write", args: { text: "x" } });
    const paused = first.events.find((e) => e.event === "tool_done");
    assert.ok(paused?.event === "tool_done" && paused.status === "approval_required");
    assert.equal(tools.calls.length, 0, "nothing runs without approval");
    assert.equal((await h.store.sessions.readCheckpoint("default_user", "a"))?.status, "paused");

    const second = await h.turn({ session_id: "a", resume: true, approve_execution: true });
    assert.equal(second.result.response, "written");
    assert.equal(tools.calls.length, 1);
    assert.deepEqual(eventTrail(second.events).slice(0, 4), ["run_start", "memory_start", "tool_start@0", "tool_done@0"]);
    assert.equal(await h.store.sessions.readCheckpoint("default_user", "a"), null);
  });

  it("resume without approval declines the call, tells the model, and continues", async () => {
    const engine = new ScriptedEngine([callTool("write", { text: "x" }), say("ok, not writing")]);
    const tools = new ScriptedToolProvider([{ name: "write", inputSchema: echoSchema, requiresApproval: true }]);
    const h = await agentHarness(engine, tools);
    await h.turn({ session_id: "d", input: "write x" });
    const { result, events } = await h.turn({ session_id: "d", resume: true });
    assert.equal(result.response, "ok, not writing");
    assert.equal(tools.calls.length, 0);
    const denied = events.find((e) => e.event === "tool_done");
    assert.ok(denied?.event === "tool_done" && denied.status === "denied");
    assert.match(lastTool(engine.requests[1]!.messages), /declined/);
  });

  it("approve_execution up front runs such a tool without pausing", async () => {
    const engine = new ScriptedEngine([callTool("write", { text: "x" }), say("written")]);
    const tools = new ScriptedToolProvider([{ name: "write", inputSchema: echoSchema, requiresApproval: true }]);
    const h = await agentHarness(engine, tools);
    const { result } = await h.turn({ session_id: "u", input: "write", approve_execution: true });
    assert.equal(result.response, "written");
    assert.equal(tools.calls.length, 1);
  });

  it("a call its provider refuses (ToolProvider.refusal) is refused before approval: never asked, never paused, never run", async () => {
    const engine = new ScriptedEngine([callTool("write", { text: "../x" }, "r1"), say("refused"), callTool("write", { text: "../x" }, "r2"), say("refused again")]);
    const tools = new ScriptedToolProvider([{ name: "write", inputSchema: echoSchema, requiresApproval: true }]);
    const refusal = async (_name: string, args: Record<string, unknown>): Promise<string | null> => (String(args.text).startsWith("..") ? `path ${JSON.stringify(args.text)} is outside` : null);
    const h = await agentHarness(engine, Object.assign(tools, { refusal }));
    let asked = 0;
    const first = await h.turn({ session_id: "ref", input: "write" }, undefined, { askApproval: async () => (asked++, "approve") });
    assert.equal(first.result.response, "refused");
    assert.equal(asked, 0, "nobody is asked about a call that cannot run");
    assert.deepEqual(first.result.warnings, []);
    assert.equal(lastTool(engine.requests[1]!.messages), 'Error (error): path "../x" is outside');
    const done = first.events.filter((e) => e.event === "tool_start" || e.event === "tool_done").map((e) => (e.event === "tool_done" ? `${e.event}:${e.status}` : e.event));
    assert.deepEqual(done, ["tool_done:error"]);
    // A front door that pauses for approval does not pause for it either.
    const second = await h.turn({ session_id: "ref", input: "write again" });
    assert.equal(second.result.response, "refused again");
    assert.equal(second.result.pending_approval, undefined);
    assert.equal(tools.calls.length, 0);
  });

  it("a per-turn tool scope (an HTTP API key's): a call outside it fails inside the turn, before approval, in session and stateless turns; a call inside runs", async () => {
    const engine = new ScriptedEngine([callTool("write", { text: "x" }, "w1"), callTool("echo", { text: "hi" }, "e1"), say("session done"), callTool("write", { text: "x" }, "w2"), say("stateless done")]);
    const tools = new ScriptedToolProvider([{ name: "write", inputSchema: echoSchema, requiresApproval: true }, echoTool()]);
    const h = await agentHarness(engine, tools);
    const toolScope = { holder: 'API key "ci"', patterns: ["echo"] };
    let asked = 0;
    const emit = (): void => undefined;
    const session = await h.runner.runTurn({ session_id: "scoped", input: "go" }, { signal: new AbortController().signal, emit, toolScope, askApproval: async () => (asked++, "approve") });
    assert.equal(session.response, "session done");
    assert.equal(lastTool(engine.requests[1]!.messages), 'Error (error): API key "ci" may not run the tool "write"');
    assert.equal(lastTool(engine.requests[2]!.messages), "echo: hi");
    const stateless = await h.runner.runStateless({ agent: "assistant", messages: [{ role: "user", content: "go" }] }, { signal: new AbortController().signal, emit, toolScope });
    assert.equal(stateless.response, "stateless done");
    assert.equal(lastTool(engine.requests[4]!.messages), 'Error (error): API key "ci" may not run the tool "write"');
    assert.equal(asked, 0, "nobody is asked about a call the key may not run");
    assert.deepEqual(tools.calls.map((call) => call.name), ["echo"]);
  });

  it("a front door that can ask: the approval callback is asked mid-turn; approve runs the tool", async () => {
    const engine = new ScriptedEngine([callTool("write", { text: "x" }, "call-7"), say("written")]);
    const tools = new ScriptedToolProvider([{ name: "write", inputSchema: echoSchema, requiresApproval: true, replies: { content: "ok" } }, echoTool()]);
    const h = await agentHarness(engine, tools);
    const asked: unknown[] = [];
    const askApproval = async (request: unknown): Promise<"approve" | "decline"> => {
      asked.push(request);
      return "approve";
    };
    const { result, events } = await h.turn({ session_id: "ask1", input: "write x" }, undefined, { askApproval });
    assert.equal(result.response, "written");
    assert.deepEqual(result.warnings, []);
    assert.equal(result.pending_approval, undefined);
    assert.deepEqual(asked, [{ tool: "write", args: { text: "x" }, server: "scripted", step: 0, call_id: "call-7" }]);
    assert.equal(tools.calls.length, 1);
    assert.deepEqual(events.filter((e) => e.event === "tool_done").map((e) => e.event === "tool_done" && e.status), ["ok"]);
    assert.equal(await h.store.sessions.readCheckpoint("default_user", "ask1"), null, "nothing paused");
  });

  it("the approval callback answering decline: the tool does not run and the model is told", async () => {
    const engine = new ScriptedEngine([callTool("write", { text: "x" }), say("fine, not writing")]);
    const tools = new ScriptedToolProvider([{ name: "write", inputSchema: echoSchema, requiresApproval: true }]);
    const h = await agentHarness(engine, tools);
    const { result, events } = await h.turn({ session_id: "ask2", input: "write x" }, undefined, { askApproval: async () => "decline" });
    assert.equal(result.response, "fine, not writing");
    assert.equal(tools.calls.length, 0);
    const denied = events.find((e) => e.event === "tool_done");
    assert.ok(denied?.event === "tool_done" && denied.status === "denied");
    assert.match(lastTool(engine.requests[1]!.messages), /declined/);
  });

  it("the approval callback is not asked for ungated tools, nor when approve_execution is set", async () => {
    const engine = new ScriptedEngine([callTool("echo", { text: "hi" }), callTool("write", { text: "x" }, "c2"), say("done")]);
    const tools = new ScriptedToolProvider([echoTool(), { name: "write", inputSchema: echoSchema, requiresApproval: true }]);
    const h = await agentHarness(engine, tools);
    let asked = 0;
    const askApproval = async (): Promise<"approve" | "decline"> => {
      asked++;
      return "decline";
    };
    const { result } = await h.turn({ session_id: "ask3", input: "go", approve_execution: true }, undefined, { askApproval });
    assert.equal(result.response, "done");
    assert.equal(asked, 0);
    assert.equal(tools.calls.length, 2);
  });

  it("cancel while the approval question is open answers cancelled and runs nothing", async () => {
    const engine = new ScriptedEngine([callTool("write", { text: "x" })]);
    const tools = new ScriptedToolProvider([{ name: "write", inputSchema: echoSchema, requiresApproval: true }]);
    const h = await agentHarness(engine, tools);
    const controller = new AbortController();
    const askApproval = (_request: unknown, signal: AbortSignal): Promise<"approve" | "decline"> =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => resolve("approve"), { once: true });
        setImmediate(() => controller.abort());
      });
    await rejectsWith(h.turn({ session_id: "ask4", input: "write x" }, controller.signal, { askApproval }), "cancelled");
    assert.equal(tools.calls.length, 0, "an answer that arrives with the cancel does not run the tool");
  });

  it("keeps reasoning out of the response and llm_chunk", async () => {
    const engine = new ScriptedEngine([[
      { type: "reasoning", delta: "engine thoughts" },
      { type: "text", delta: "<think>inline " },
      { type: "text", delta: "thoughts</think>The answer." },
      { type: "end", finishReason: "stop" },
    ]]);
    const h = await agentHarness(engine, new ScriptedToolProvider([]));
    const { result, events } = await h.turn({ session_id: "r", input: "q" });
    assert.equal(result.response, "The answer.");
    const thinking = events.flatMap((e) => (e.event === "thinking_chunk" ? [e.delta] : [])).join("");
    assert.equal(thinking, "engine thoughtsinline thoughts");
    assert.equal(events.flatMap((e) => (e.event === "llm_chunk" ? [e.delta] : [])).join(""), "The answer.");
  });

  it("a second turn sees the first, and hostile ids never reach the disk", async () => {
    const engine = new ScriptedEngine([say("first"), say("second")]);
    const h = await agentHarness(engine, new ScriptedToolProvider([]));
    await h.turn({ session_id: "two", input: "one" });
    await h.turn({ session_id: "two", input: "two" });
    assert.deepEqual(engine.requests[1]!.messages.map((m) => m.role), ["system", "user", "assistant", "user"]);
    for (const bad of ["../etc", "a/b", ".hidden", "", "x".repeat(65)]) {
      await rejectsWith(h.turn({ session_id: bad, input: "x" }), "invalid_request");
      await rejectsWith(h.turn({ user_id: bad, input: "x" }), "invalid_request");
    }
    await rejectsWith(h.turn({ agent: "nobody", input: "x" }), "invalid_params");
  });

  it("a request that fails before its turn leaves no session folder; a failed turn of an existing session keeps it", async () => {
    const h = await agentHarness(new ScriptedEngine([say("kept")]), new ScriptedToolProvider([]));
    await rejectsWith(h.turn({ user_id: "u9", session_id: "ghost", agent: "nobody", input: "x" }), "invalid_params");
    await rejectsWith(h.turn({ user_id: "u9", session_id: "ghost2", resume: true }), "invalid_request");
    assert.deepEqual(await readdir(path.join(h.dataDir, "sessions")).catch(() => []), [], "neither the session nor the user folder is left");
    await h.turn({ user_id: "u9", session_id: "real", input: "hi" });
    await rejectsWith(h.turn({ user_id: "u9", session_id: "real", agent: "nobody", input: "x" }), "invalid_params");
    assert.deepEqual(await readdir(path.join(h.dataDir, "sessions", "u9")), ["real"]);
    assert.equal((await h.store.sessions.loadHistory("u9", "real")).messages.length, 2);
  });

  it("resume with nothing to resume is invalid_request", async () => {
    const h = await agentHarness(new ScriptedEngine([]), new ScriptedToolProvider([]));
    await rejectsWith(h.turn({ session_id: "none", resume: true }), "invalid_request");
  });
});
