// MCP tool result content through the built CLI: a real MCP server (the SDK's McpServer) returns
// an image, audio, a resource link with an embedded resource, and structured content only; a
// scripted OpenAI-compatible upstream (the openai engine takes images) shows what the model got.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

const PROTOCOL_SERVER = fileURLToPath(new URL("../helpers/mcp-protocol-server.js", import.meta.url));

type Json = Record<string, unknown>;

/** The fixture's 4-byte "PNG" (mcp-protocol-server.ts). */
const FIXTURE_IMAGE_BASE64 = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString("base64");

let upstream: AgentUpstream | undefined;
let proc: CliProcess | undefined;
after(async () => {
  // A failed assertion leaves the CLI running: end it, or the test file never exits.
  if (proc !== undefined && proc.child.exitCode === null) proc.child.kill("SIGKILL");
  await upstream?.close();
});

describe("MCP tool result content reaches the model", () => {
  it("an image goes to a model that takes images after the tool results; audio, links, resources and structured content as text", async () => {
    upstream = await startAgentUpstream([
      { call: { id: "c1", name: "picture", arguments: {} } },
      { call: { id: "c2", name: "sound", arguments: {} } },
      { call: { id: "c3", name: "links", arguments: {} } },
      { call: { id: "c4", name: "measure", arguments: {} } },
      { text: ["seen"] },
    ]);
    const { dir, configPath } = await tempConfig(
      configYaml({
        llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } },
        agents: { assistant: { temperature: 0, tools: ["*"] } },
        mcp: { servers: { proto: mcpServer({ command: process.execPath, args: [PROTOCOL_SERVER] }) } },
      }),
    );
    proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const reply = await proc.request({ id: "t1", method: "chat", params: { session_id: "content", input: "show me" } }, 60_000);
    assert.equal((reply.result as Json).response, "seen", JSON.stringify(reply));

    assert.equal(toolResultSent(upstream, "c1"), "a red dot:\n[image: image/png, 4 bytes]");
    assert.equal(toolResultSent(upstream, "c2"), "[audio: audio/wav, 1000 bytes]");
    assert.equal(toolResultSent(upstream, "c3"), "[resource link: file:///docs/readme.md, text/markdown]\n[resource: file:///docs/notes.txt]\nthe notes");
    assert.equal(toolResultSent(upstream, "c4"), '{"size":7}');

    // The step after the picture: its tool result, then the image itself in a user message.
    const second = (upstream.chats()[1]?.body as { messages: Json[] }).messages;
    const tool = second.findIndex((m) => m.role === "tool" && m.tool_call_id === "c1");
    assert.deepEqual(second.slice(tool + 1), [
      {
        role: "user",
        content: [
          { type: "text", text: "The image picture returned (call c1):" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${FIXTURE_IMAGE_BASE64}` } },
        ],
      },
    ]);
    // Every later step still has it in the same place (the KV cache prefix stays the same).
    const last = (upstream.chats()[4]?.body as { messages: Json[] }).messages;
    assert.deepEqual(last.slice(tool, tool + 2), second.slice(tool, tool + 2));
    assert.equal(last[tool + 2]?.role, "assistant");
    // The tool_done event previews the text, never the base64.
    const done = proc.messages.find((m) => m.id === "t1" && m.event === "tool_done" && m.tool === "picture");
    assert.equal(done?.preview, "a red dot: [image: image/png, 4 bytes]");

    // A resumed session's next turn gives the stored image again, in the same place.
    upstream.push({ text: ["again"] });
    await proc.request({ id: "t2", method: "chat", params: { session_id: "content", input: "and now?" } }, 60_000);
    const next = (upstream.chats()[5]?.body as { messages: Json[] }).messages;
    assert.deepEqual(next.slice(tool, tool + 2), second.slice(tool, tool + 2));
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });
});
