// ACP: MCP prompts as the editor's slash commands (serve-stdio --protocol acp, the official SDK's
// client side as the editor): a real MCP server passed in session/new (the SDK's McpServer), its
// prompt listed in available_commands_update, and `/proto:review file=a.ts` run as that prompt on
// a scripted upstream that shows what the model got.
import assert from "node:assert/strict";
import { mkdtemp, readFile, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { AcpEditor } from "../helpers/acp-editor.js";
import { openaiModelYaml, startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

const PROTOCOL_SERVER = fileURLToPath(new URL("../helpers/mcp-protocol-server.js", import.meta.url));
const PROMPT_CHANGE_SERVER = fileURLToPath(new URL("../helpers/mcp-prompt-change-server.js", import.meta.url));

let upstream: AgentUpstream | undefined;
let editor: AcpEditor | undefined;
after(async () => {
  if (editor !== undefined && editor.child.exitCode === null) editor.child.kill("SIGKILL");
  await upstream?.close();
});

describe("ACP: MCP prompts as available commands", () => {
  it("lists the session's MCP prompts as commands, and a /server:prompt prompt runs the prompt", async () => {
    upstream = await startAgentUpstream([{ text: ["reviewed"] }]);
    const { dir, configPath } = await tempConfig(openaiModelYaml(upstream.baseUrl, ["    memory: false"]));
    editor = new AcpEditor(["--config", configPath], { cwd: dir });
    await editor.initialize();
    const cwd = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd, mcpServers: [{ name: "proto", command: process.execPath, args: [PROTOCOL_SERVER], env: [] }] });
    const advertised = () => editor?.updates(sessionId).filter((u) => u.sessionUpdate === "available_commands_update") ?? [];
    await editor.waitFor(() => advertised().length > 0, "available_commands_update");
    assert.deepEqual(advertised(), [{ sessionUpdate: "available_commands_update", availableCommands: [{ name: "proto:review", description: "Review a file", input: { hint: "file=… [tone=…]" } }] }]);

    const answer = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: '/proto:review file=a.ts tone="very kind"' }] });
    assert.equal(answer.stopReason, "end_turn");
    assert.equal(editor.text(sessionId), "reviewed");
    const messages = (upstream.chats()[0]?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    assert.deepEqual(messages.slice(1).map((m) => m.role), ["user"]);
    assert.deepEqual((messages[1]?.content as unknown[])[0], { type: "text", text: "Please review a.ts in a very kind tone." });
    assert.equal((await editor.close()).code, 0, editor.stderr);
    assert.deepEqual(editor.stdoutViolations(), []);
  });
  it("a server's prompts/list_changed updates the commands at once, without a turn", async () => {
    const { dir, configPath } = await tempConfig(openaiModelYaml("http://127.0.0.1:9/v1", ["    memory: false"]));
    const changing = new AcpEditor(["--config", configPath], { cwd: dir });
    editor = changing;
    await changing.initialize();
    const cwd = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));
    const pidFile = path.join(dir, "prompt-server.pid");
    const { sessionId } = await changing.agent.request(methods.agent.session.new, { cwd, mcpServers: [{ name: "pc", command: process.execPath, args: [PROMPT_CHANGE_SERVER, pidFile], env: [] }] });
    const names = () => changing.updates(sessionId).flatMap((u) => (u.sessionUpdate === "available_commands_update" ? [u.availableCommands.map((c) => c.name)] : []));
    await changing.waitFor(() => names().length > 0, "the first available_commands_update");
    assert.deepEqual(names(), [["pc:first"]]);
    process.kill(Number(await readFile(pidFile, "utf8")), "SIGUSR1");
    await changing.waitFor(() => names().length > 1, "the commands after the server's prompts/list_changed");
    assert.deepEqual(names(), [["pc:first"], ["pc:first", "pc:second"]]);
    assert.equal((await changing.close()).code, 0, changing.stderr);
    assert.deepEqual(changing.stdoutViolations(), []);
  });
});
