// serve-stdio --protocol acp on the embedded engine (real llama.cpp inference on the generated
// demo GGUF models), driven by the SDK's client side: the answer streamed as chunks, and the tool
// model calling `echo` on a real MCP server (server-everything) the editor passed in session/new.
import assert from "node:assert/strict";
import { mkdtemp, realpath } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { AcpEditor, choose } from "../helpers/acp-editor.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";

const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js");

let demoPath = "";
let toolPath = "";
before(async () => {
  [demoPath, toolPath] = await Promise.all([ensureFixture("demo"), ensureFixture("demo", { toolMode: true })]);
});

async function editorFor(modelPath: string, agent: Record<string, unknown> = {}): Promise<AcpEditor> {
  const { dir, configPath } = await tempConfig(configYaml({ llama: { models: { default: localModel(modelPath) } }, agents: { assistant: { temperature: 0, ...agent } } }));
  return new AcpEditor(["--config", configPath], { cwd: dir });
}

const workspace = async (): Promise<string> => realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));

describe("ACP on the embedded engine (demo GGUF models)", () => {
  it("streams the demo sentence as agent_message_chunks; no image input for a text-only model", async () => {
    const editor = await editorFor(demoPath);
    const init = await editor.initialize({});
    assert.equal(init.agentCapabilities?.promptCapabilities?.image, false);
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: await workspace(), mcpServers: [] });
    const response = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Hello!" }] });
    assert.equal(response.stopReason, "end_turn");
    assert.equal(editor.text(sessionId), DEMO_SENTENCE);
    // The first prompt loaded the model: the editor saw it as a one-entry plan, in progress then completed.
    const plans = editor.updates(sessionId).flatMap((u) => (u.sessionUpdate === "plan" ? u.entries : []));
    assert.deepEqual(plans[0], { content: "Loading model default", priority: "high", status: "in_progress" });
    assert.deepEqual(plans.at(-1), { content: "Loaded model default", priority: "high", status: "completed" });
    // An image anyway: refused before the turn starts, naming the part.
    await assert.rejects(
      editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }] }),
      (error: { code?: number; message?: string }) => error.code === -32602 && /does not take image input/.test(String(error.message)),
    );
    assert.equal((await editor.close()).code, 0, editor.stderr);
    assert.deepEqual(editor.stdoutViolations(), []);
  });

  it("the tool model calls echo on the MCP server passed in session/new, after the editor allowed it", async () => {
    const editor = await editorFor(toolPath, { tools: ["echo"] });
    await editor.initialize({});
    const { sessionId } = await editor.agent.request(methods.agent.session.new, {
      cwd: await workspace(),
      mcpServers: [{ name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"], env: [] }],
    });
    editor.permissionPolicy = () => choose("allow_once");
    const response = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: `please ${DEMO_TOOL_TRIGGER} hi` }] });
    assert.equal(response.stopReason, "end_turn");
    assert.equal(editor.permissions.length, 1);
    assert.equal(editor.permissions[0]?.request.toolCall.title, 'echo {"message":"hi"}');
    const calls = editor.updates(sessionId).filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
    assert.deepEqual(calls.map((u) => u.status), ["pending", "in_progress", "completed"]);
    const done = calls.at(-1);
    assert.ok(done?.sessionUpdate === "tool_call_update");
    assert.match(JSON.stringify(done.content), /Echo: hi/);
    assert.equal(editor.text(sessionId), DEMO_SENTENCE, "the model answers after the tool result");
    assert.equal((await editor.close()).code, 0, editor.stderr);
    assert.deepEqual(editor.stdoutViolations(), []);
  });
});
