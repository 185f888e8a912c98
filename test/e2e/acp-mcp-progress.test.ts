// ACP: a tool's MCP progress and a server's tool-list change as the editor sees them
// (serve-stdio --protocol acp, the official SDK's client side as the editor, a real MCP server
// passed in session/new): each `notifications/progress` is a tool_call_update of the running call
// with the report as its content; `notifications/tools/list_changed` is a `notice` (the editor
// takes notices) naming the server's tools from then on.
import assert from "node:assert/strict";
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { AcpEditor, toolUpdates } from "../helpers/acp-editor.js";
import { openaiModelYaml, startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

const PROTOCOL_SERVER = fileURLToPath(new URL("../helpers/mcp-protocol-server.js", import.meta.url));

let upstream: AgentUpstream | undefined;
let editor: AcpEditor | undefined;
after(async () => {
  if (editor !== undefined && editor.child.exitCode === null) editor.child.kill("SIGKILL");
  await upstream?.close();
});

describe("ACP: MCP progress and tool-list changes", () => {
  it("progress reports update the running tool call; a tool-list change is a notice", async () => {
    upstream = await startAgentUpstream([{ call: { id: "c1", name: "count", arguments: {} } }, { call: { id: "c2", name: "unlock", arguments: {} } }, { text: ["done"] }]);
    const { dir, configPath } = await tempConfig(openaiModelYaml(upstream.baseUrl, ["    memory: false"]));
    editor = new AcpEditor(["--config", configPath], { cwd: dir });
    await editor.initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: true, session: { notices: {} } });
    const cwd = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd, mcpServers: [{ name: "proto", command: process.execPath, args: [PROTOCOL_SERVER], env: [] }] });

    const answer = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "count, then unlock" }] });
    assert.equal(answer.stopReason, "end_turn");
    assert.equal(editor.text(sessionId), "done");
    assert.equal(toolResultSent(upstream, "c1"), "counted");
    const counted = toolUpdates(editor, sessionId, "c1").map(({ sessionUpdate, status, content }) => ({ sessionUpdate, status, content }));
    const text = (t: string) => [{ type: "content", content: { type: "text", text: t } }];
    assert.deepEqual(counted, [
      { sessionUpdate: "tool_call", status: "pending", content: undefined },
      { sessionUpdate: "tool_call_update", status: "in_progress", content: undefined },
      { sessionUpdate: "tool_call_update", status: undefined, content: text("at 1 (1/3)") },
      { sessionUpdate: "tool_call_update", status: undefined, content: text("at 2 (2/3)") },
      { sessionUpdate: "tool_call_update", status: undefined, content: text("at 3 (3/3)") },
      { sessionUpdate: "tool_call_update", status: "completed", content: text("counted") },
    ]);
    const notices = editor.updates(sessionId).filter((u) => u.sessionUpdate === "notice");
    assert.equal(notices.length, 1, JSON.stringify(notices));
    const notice = notices[0] as { title: string; description: string; severity: string };
    assert.equal(notice.severity, "info");
    assert.equal(notice.title, "MCP server proto changed its tools");
    assert.match(notice.description, /^Tools now: .*\bsecret\b/);
    assert.equal((await editor.close()).code, 0, editor.stderr);
    assert.deepEqual(editor.stdoutViolations(), []);
  });
});
