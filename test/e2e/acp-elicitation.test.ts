// ACP: an MCP server's question (elicitation/create, form mode) forwarded to the editor (the
// official SDK's client side) as ACP's elicitation/create, mid-turn, scoped to the session and the
// tool call; the editor's answer reaches the server, whose tool result the model (a scripted
// upstream) sees. An editor that did not advertise `elicitation.form` is never asked: the server
// gets a decline.
import assert from "node:assert/strict";
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { AcpEditor } from "../helpers/acp-editor.js";
import { openaiModelYaml, startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

const ELICIT_SERVER = fileURLToPath(new URL("../helpers/mcp-elicit-server.js", import.meta.url));
const SCHEMA = { type: "object", properties: { name: { type: "string", title: "Your name" }, age: { type: "number" } }, required: ["name"] };

const upstreams: AgentUpstream[] = [];
const editors: AcpEditor[] = [];
after(async () => {
  for (const editor of editors) if (editor.child.exitCode === null) editor.child.kill("SIGKILL");
  await Promise.all(upstreams.map((upstream) => upstream.close()));
});

async function promptAsk(form: boolean): Promise<{ editor: AcpEditor; upstream: AgentUpstream; sessionId: string }> {
  const upstream = await startAgentUpstream([{ call: { id: "c1", name: "ask", arguments: {} } }, { text: ["thanks"] }]);
  upstreams.push(upstream);
  const { dir, configPath } = await tempConfig(openaiModelYaml(upstream.baseUrl, ["    memory: false"]));
  const editor = new AcpEditor(["--config", configPath], { cwd: dir });
  editors.push(editor);
  editor.elicitationPolicy = () => ({ action: "accept", content: { name: "Ann", age: 7 } });
  await editor.initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: true, ...(form ? { elicitation: { form: {} } } : {}) });
  const cwd = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));
  const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd, mcpServers: [{ name: "people", command: process.execPath, args: [ELICIT_SERVER], env: [] }] });
  const answer = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "ask me" }] });
  assert.equal(answer.stopReason, "end_turn");
  assert.equal(editor.text(sessionId), "thanks");
  return { editor, upstream, sessionId };
}

describe("ACP: MCP elicitation", () => {
  it("an editor with elicitation.form is asked mid-turn; its answer reaches the server", async () => {
    const { editor, upstream, sessionId } = await promptAsk(true);
    assert.deepEqual(editor.elicitations, [{ sessionId, toolCallId: "c1", mode: "form", message: "What is your name?", requestedSchema: SCHEMA }]);
    assert.equal(toolResultSent(upstream, "c1"), 'answer: accept {"name":"Ann","age":7}');
    assert.equal((await editor.close()).code, 0, editor.stderr);
    assert.deepEqual(editor.stdoutViolations(), []);
  });

  it("an editor without it is never asked: the server gets a decline", async () => {
    const { editor, upstream } = await promptAsk(false);
    assert.deepEqual(editor.elicitations, []);
    assert.equal(toolResultSent(upstream, "c1"), "answer: decline null");
    assert.equal((await editor.close()).code, 0, editor.stderr);
  });
});
