// MCP elicitation (form mode) through the built CLI: a real MCP server (the SDK's McpServer) asks
// the user a question from inside a tool call; a stdio v1 / JSON-RPC chat pauses with
// `pending_elicitation` while the call keeps running, the host answers with `resume: true,
// elicitation`, and the model (a scripted upstream) sees what the server made of the answer.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";
import { endedAfterAll } from "../helpers/ended-after-all.js";

const ELICIT_SERVER = fileURLToPath(new URL("../helpers/mcp-elicit-server.js", import.meta.url));
const QUESTION = {
  server: "people",
  message: "What is your name?",
  requested_schema: { type: "object", properties: { name: { type: "string", title: "Your name" }, age: { type: "number" } }, required: ["name"] },
};

type Json = Record<string, unknown>;

const { upstreams, procs } = endedAfterAll();

async function serve(protocol: "v1" | "jsonrpc", mcp: Record<string, unknown> = {}): Promise<{ proc: CliProcess; upstream: AgentUpstream }> {
  const upstream = await startAgentUpstream();
  upstreams.push(upstream);
  const { dir, configPath } = await tempConfig(
    configYaml({
      llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } },
      agents: { assistant: { temperature: 0 } },
      mcp: { servers: { people: mcpServer({ command: process.execPath, args: [ELICIT_SERVER] }) }, ...mcp },
    }),
  );
  const proc = new CliProcess(["serve-stdio", ...(protocol === "jsonrpc" ? ["--protocol", "jsonrpc"] : []), "--config", configPath], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "info" } });
  procs.push(proc);
  return { proc, upstream };
}

function eventsOf(proc: CliProcess, id: string): WireMessage[] {
  return proc.messages.filter((m) => m.id === id && m.type === "event");
}

/** A chat whose model calls `ask` (call id `callId`): it pauses on the server's question. */
async function pausedChat(proc: CliProcess, upstream: AgentUpstream, id: string, session: string, callId: string): Promise<void> {
  upstream.push({ call: { id: callId, name: "ask", arguments: {} } }, { text: ["thanks"] });
  const reply = await proc.request({ id, method: "chat", params: { session_id: session, input: "ask me" } }, 60_000);
  assert.equal(reply.type, "result", JSON.stringify(reply));
  const result = reply.result as Json;
  assert.equal(result.response, "");
  assert.deepEqual(result.pending_elicitation, QUESTION);
  assert.equal(result.pending_approval, undefined);
  const asked = eventsOf(proc, id).filter((e) => e.event === "elicitation_request");
  assert.deepEqual(asked.map(({ id: _id, type: _type, ...fields }) => fields), [{ event: "elicitation_request", step: 0, ...QUESTION }]);
  // The call started and has not finished: the turn ends while it waits.
  assert.deepEqual(eventsOf(proc, id).filter((e) => e.event === "tool_start" || e.event === "tool_done").map((e) => e.event), ["tool_start"]);
}

/** Resumes with `elicitation` (or none) and returns what the model was told the tool said. */
async function resume(proc: CliProcess, upstream: AgentUpstream, id: string, session: string, callId: string, elicitation?: Json): Promise<string | undefined> {
  const reply = await proc.request({ id, method: "chat", params: { session_id: session, resume: true, ...(elicitation === undefined ? {} : { elicitation }) } }, 60_000);
  assert.equal(reply.type, "result", JSON.stringify(reply));
  assert.equal((reply.result as Json).response, "thanks");
  const calls = eventsOf(proc, id).filter((e) => e.event === "tool_start" || e.event === "tool_done");
  // No second tool_start: the call that started in the paused turn is the one that finishes.
  assert.deepEqual(calls.map((e) => [e.event, e.tool, e.status]), [["tool_done", "ask", "ok"]]);
  return toolResultSent(upstream, callId);
}

describe("MCP elicitation: the turn pauses on a server's question (stdio v1, JSON-RPC)", () => {
  it("stdio v1: accepted with content, declined, cancelled, and a resume without an answer (cancel)", async () => {
    const { proc, upstream } = await serve("v1");
    await pausedChat(proc, upstream, "a1", "accept", "c1");
    assert.equal(await resume(proc, upstream, "a2", "accept", "c1", { action: "accept", content: { name: "Ann", age: 7 } }), 'answer: accept {"name":"Ann","age":7}');
    await pausedChat(proc, upstream, "d1", "decline", "c2");
    assert.equal(await resume(proc, upstream, "d2", "decline", "c2", { action: "decline" }), "answer: decline null");
    await pausedChat(proc, upstream, "x1", "cancel", "c3");
    assert.equal(await resume(proc, upstream, "x2", "cancel", "c3", { action: "cancel" }), "answer: cancel null");
    await pausedChat(proc, upstream, "n1", "none", "c4");
    assert.equal(await resume(proc, upstream, "n2", "none", "c4"), "answer: cancel null");
    // The model saw the call's result once, after the answer: nothing was run twice.
    const told = upstream.chats().map((request) => (request.body as { messages: Array<{ role: string; tool_call_id?: string }> }).messages.filter((m) => m.role === "tool" && m.tool_call_id === "c1").length);
    assert.deepEqual(told.slice(0, 2), [0, 1]);
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });

  it("stdio v1: elicitation without resume is refused; a new turn on the paused session declines the server", async () => {
    const { proc, upstream } = await serve("v1");
    const bad = await proc.request({ id: "b", method: "chat", params: { session_id: "s", input: "hi", elicitation: { action: "accept" } } }, 10_000);
    assert.equal(bad.type, "error", JSON.stringify(bad));
    // Seed 000's v1 codes: bad params are invalid_request; the message names the field.
    assert.equal(bad.code, "invalid_request");
    assert.match(String(bad.message), /elicitation.*resume: true/);
    await pausedChat(proc, upstream, "p1", "s", "c1");
    // The script's next step ("thanks") answers the new turn.
    const next = await proc.request({ id: "p2", method: "chat", params: { session_id: "s", input: "never mind" } }, 60_000);
    assert.equal((next.result as Json).response, "thanks", JSON.stringify(next));
    assert.match(String((next.result as Json).warnings), /discarded the unfinished turn/);
    await proc.waitForStderr(/a new turn dropped the paused one: its server's question is declined/, 10_000);
    const resumed = await proc.request({ id: "p3", method: "chat", params: { session_id: "s", resume: true, elicitation: { action: "accept" } } }, 10_000);
    assert.equal(resumed.code, "invalid_request", JSON.stringify(resumed));
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
  });

  it("stdio v1: a server that gets no answer within mcp.elicitation_timeout_s is declined; a late answer changes nothing", async () => {
    const { proc, upstream } = await serve("v1", { elicitation_timeout_s: 0.3 });
    await pausedChat(proc, upstream, "t1", "late", "c1");
    await proc.waitForStderr(/elicitation declined: no answer in time/, 20_000);
    assert.equal(await resume(proc, upstream, "t2", "late", "c1", { action: "accept", content: { name: "Too late" } }), "answer: decline null");
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
  });

  it("JSON-RPC: the result's pending_elicitation, the $/event, and chat {resume, elicitation} answer it", async () => {
    const { proc, upstream } = await serve("jsonrpc");
    upstream.push({ call: { id: "c1", name: "ask", arguments: {} } }, { text: ["thanks"] });
    proc.send({ jsonrpc: "2.0", id: 1, method: "chat", params: { session_id: "j", input: "ask me" } });
    const paused = (await proc.waitFor((m) => (m as Json).id === 1 && ("result" in m || "error" in m), 60_000)) as Json;
    assert.deepEqual((paused.result as Json).pending_elicitation, QUESTION, JSON.stringify(paused));
    const events = proc.messages.filter((m) => (m as Json).method === "$/event" && ((m as Json).params as Json).request_id === 1).map((m) => (m as Json).params as Json);
    const asked = events.filter((e) => e.event === "elicitation_request");
    assert.deepEqual(asked.map((e) => ({ step: e.step, server: e.server, message: e.message, requested_schema: e.requested_schema })), [{ step: 0, ...QUESTION }]);
    proc.send({ jsonrpc: "2.0", id: 2, method: "chat", params: { session_id: "j", resume: true, elicitation: { action: "accept", content: { name: "Jo" } } } });
    const done = (await proc.waitFor((m) => (m as Json).id === 2 && ("result" in m || "error" in m), 60_000)) as Json;
    assert.equal((done.result as Json).response, "thanks", JSON.stringify(done));
    assert.equal(toolResultSent(upstream, "c1"), 'answer: accept {"name":"Jo"}');
    proc.send({ jsonrpc: "2.0", id: 3, method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
  });
});
