// notifications/tools/list_changed through the built CLI: a real MCP server (the SDK's McpServer)
// adds a tool while a chat runs; the next model step's request (on a scripted OpenAI-compatible
// upstream) offers it, and the chat carries the `tools_changed` event, on stdio v1 and JSON-RPC.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";
import { endedAfterAll } from "../helpers/ended-after-all.js";

const PROTOCOL_SERVER = fileURLToPath(new URL("../helpers/mcp-protocol-server.js", import.meta.url));

type Json = Record<string, unknown>;

const { upstreams, procs } = endedAfterAll();

async function serve(upstream: AgentUpstream, protocol: "v1" | "jsonrpc", tools: string[] = ["*"]): Promise<CliProcess> {
  const { dir, configPath } = await tempConfig(
    configYaml({
      llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } },
      agents: { assistant: { temperature: 0, tools } },
      mcp: { servers: { proto: mcpServer({ command: process.execPath, args: [PROTOCOL_SERVER] }) } },
    }),
  );
  const proc = new CliProcess(["serve-stdio", ...(protocol === "jsonrpc" ? ["--protocol", "jsonrpc"] : []), "--config", configPath], { cwd: dir });
  procs.push(proc);
  return proc;
}

/** The tool names a chat completion request offered the model. */
function offered(upstream: AgentUpstream, index: number): string[] {
  const body = upstream.chats()[index]?.body as { tools?: Array<{ function: { name: string } }> } | undefined;
  return (body?.tools ?? []).map((tool) => tool.function.name).sort();
}

/** The unlock -> secret -> answer script: step 1 can only call `secret` if it was offered. */
async function unlockingUpstream(): Promise<AgentUpstream> {
  const upstream = await startAgentUpstream([
    { call: { id: "c1", name: "unlock", arguments: {} } },
    { call: { id: "c2", name: "secret", arguments: { who: "ann" } } },
    { text: ["done"] },
  ]);
  upstreams.push(upstream);
  return upstream;
}

describe("MCP tools/list_changed: the next model step sees the new list", () => {
  it("stdio v1: a tool added by a call is offered at the next step, called, and announced by tools_changed", async () => {
    const upstream = await unlockingUpstream();
    const proc = await serve(upstream, "v1");
    const reply = await proc.request({ id: "t1", method: "chat", params: { session_id: "lc", input: "unlock it" } }, 60_000);
    assert.equal(reply.type, "result", JSON.stringify(reply));
    assert.equal((reply.result as Json).response, "done");
    assert.deepEqual(offered(upstream, 0), ["count", "links", "measure", "picture", "sound", "unlock"]);
    assert.deepEqual(offered(upstream, 1), ["count", "links", "measure", "picture", "secret", "sound", "unlock"]);
    assert.equal(toolResultSent(upstream, "c2"), "the secret is 42, ann");
    const events = proc.messages.filter((m) => m.id === "t1" && m.type === "event");
    const changed = events.filter((e) => e.event === "tools_changed");
    assert.deepEqual(changed.map(({ event, step, server, tools }: WireMessage) => ({ event, step, server, tools })), [
      { event: "tools_changed", step: 1, server: "proto", tools: ["unlock", "picture", "sound", "links", "measure", "count", "secret"] },
    ]);
    // Announced after the call that caused it, before the step that sees it.
    const trail = events.map((e) => `${String(e.event)}@${typeof e.step === "number" ? e.step : ""}`);
    assert.equal(trail.indexOf("tools_changed@1"), trail.indexOf("tool_done@0") + 1, trail.join(" "));
    assert.equal(trail.indexOf("llm_start@1"), trail.indexOf("tools_changed@1") + 1, trail.join(" "));
    // The next turn starts with the new list and announces nothing: nothing changed since.
    upstream.push({ text: ["again"] });
    const second = await proc.request({ id: "t2", method: "chat", params: { session_id: "lc", input: "hi" } }, 60_000);
    assert.equal((second.result as Json).response, "again");
    assert.ok(offered(upstream, 3).includes("secret"));
    assert.equal(proc.messages.filter((m) => m.id === "t2" && m.event === "tools_changed").length, 0);
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });

  it("JSON-RPC: the event is a $/event notification of the chat; the agent's patterns apply to the new list", async () => {
    const upstream = await unlockingUpstream();
    // Only what the agent's patterns select is offered and announced (not `sound`, `links`...).
    const proc = await serve(upstream, "jsonrpc", ["unlock", "secret", "picture"]);
    proc.send({ jsonrpc: "2.0", id: 1, method: "chat", params: { session_id: "lc", input: "unlock it" } });
    const reply = (await proc.waitFor((m) => (m as Json).id === 1 && ("result" in m || "error" in m), 60_000)) as Json;
    assert.equal((reply.result as Json).response, "done", JSON.stringify(reply));
    assert.deepEqual(offered(upstream, 0), ["picture", "unlock"]);
    assert.deepEqual(offered(upstream, 1), ["picture", "secret", "unlock"]);
    const events = proc.messages.filter((m) => (m as Json).method === "$/event" && ((m as Json).params as Json).request_id === 1).map((m) => (m as Json).params as Json);
    const changed = events.filter((e) => e.event === "tools_changed");
    assert.equal(changed.length, 1, JSON.stringify(events));
    assert.deepEqual({ step: changed[0]?.step, server: changed[0]?.server, tools: changed[0]?.tools }, { step: 1, server: "proto", tools: ["unlock", "picture", "secret"] });
    proc.send({ jsonrpc: "2.0", id: 2, method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
  });
});
