// MCP prompts and resources through the built CLI (stdio v1 and JSON-RPC): a real MCP server (the
// SDK's McpServer) offers a prompt and resources; `mcp_prompts` / `mcp_resources` list them, a
// chat's `prompt` param and `resource` input parts expand to exactly what a scripted
// OpenAI-compatible upstream (the openai engine takes images) receives.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";
import { endedAfterAll } from "../helpers/ended-after-all.js";

const PROTOCOL_SERVER = fileURLToPath(new URL("../helpers/mcp-protocol-server.js", import.meta.url));
const FIXTURE_IMAGE_URL = `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString("base64")}`;

type Json = Record<string, unknown>;

const { upstreams, procs } = endedAfterAll();

async function serve(protocol: "v1" | "jsonrpc"): Promise<{ proc: CliProcess; upstream: AgentUpstream }> {
  const upstream = await startAgentUpstream([]);
  upstreams.push(upstream);
  const { dir, configPath } = await tempConfig(
    configYaml({
      llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } },
      // No memory: a later chat's request must hold exactly its own input.
      agents: { assistant: { temperature: 0, tools: [], memory: false } },
      mcp: { servers: { proto: mcpServer({ command: process.execPath, args: [PROTOCOL_SERVER] }) } },
    }),
  );
  const proc = new CliProcess(["serve-stdio", ...(protocol === "jsonrpc" ? ["--protocol", "jsonrpc"] : []), "--config", configPath], { cwd: dir });
  procs.push(proc);
  return { proc, upstream };
}

/** The messages of the model request after the system prompt. */
function sentAfterSystem(upstream: AgentUpstream, index: number): Json[] {
  const messages = (upstream.chats()[index]?.body as { messages: Json[] }).messages;
  assert.equal(messages[0]?.role, "system");
  return messages.slice(1);
}

describe("MCP prompts and resources on stdio", () => {
  it("v1: mcp_prompts lists, a chat's prompt expands to the prompt's messages; mcp_resources lists, resource parts attach contents", async () => {
    const { proc, upstream } = await serve("v1");
    const prompts = await proc.request({ id: "p", method: "mcp_prompts" }, 60_000);
    assert.deepEqual(prompts.result, {
      prompts: [{ server: "proto", name: "review", description: "Review a file", arguments: [{ name: "file", description: "the file to review", required: true }, { name: "tone", required: false }] }],
    });

    upstream.push({ text: ["reviewed"] });
    const reply = await proc.request({ id: "c1", method: "chat", params: { session_id: "pr", prompt: { server: "proto", name: "review", arguments: { file: "a.ts", tone: "kind" } } } }, 60_000);
    assert.equal((reply.result as Json).response, "reviewed", JSON.stringify(reply));
    assert.deepEqual(sentAfterSystem(upstream, 0), [
      { role: "user", content: [{ type: "text", text: "Please review a.ts in a kind tone." }, { type: "image_url", image_url: { url: FIXTURE_IMAGE_URL } }] },
    ]);
    const start = proc.messages.find((m) => m.id === "c1" && m.event === "run_start");
    assert.equal(start?.user_input, "Please review a.ts in a kind tone.\n");

    const resources = await proc.request({ id: "r", method: "mcp_resources" }, 60_000);
    assert.deepEqual(resources.result, {
      resources: [
        { server: "proto", uri: "file:///docs/notes.txt", name: "notes", description: "The notes", mime_type: "text/plain" },
        { server: "proto", uri: "file:///docs/dot.png", name: "dot", mime_type: "image/png" },
      ],
      templates: [{ server: "proto", uri_template: "file:///docs/{name}.md", name: "doc", description: "A doc by name" }],
    });

    upstream.push({ text: ["read"] });
    const input = [
      { type: "text", text: "Summarize these:" },
      { type: "resource", server: "proto", uri: "file:///docs/notes.txt" },
      { type: "resource", server: "proto", uri: "file:///docs/dot.png" },
      { type: "resource", server: "proto", uri: "file:///docs/intro.md" },
    ];
    const read = await proc.request({ id: "c2", method: "chat", params: { session_id: "res", input } }, 60_000);
    assert.equal((read.result as Json).response, "read", JSON.stringify(read));
    assert.deepEqual(sentAfterSystem(upstream, 1), [
      {
        role: "user",
        content: [
          { type: "text", text: "Summarize these:" },
          { type: "text", text: "[resource: file:///docs/notes.txt]\nthe notes" },
          { type: "text", text: "[resource: file:///docs/dot.png]" },
          { type: "image_url", image_url: { url: FIXTURE_IMAGE_URL } },
          { type: "text", text: "[resource: file:///docs/intro.md]\n# intro" },
        ],
      },
    ]);

    // Unknown prompt, unknown server, a prompt with input: refused before any model request.
    const unknownPrompt = await proc.request({ id: "e1", method: "chat", params: { prompt: { server: "proto", name: "nope" } } }, 60_000);
    assert.equal(unknownPrompt.type, "error");
    assert.equal(unknownPrompt.code, "invalid_request");
    assert.match(String(unknownPrompt.message), /prompt "nope" of MCP server "proto"/);
    const unknownServer = await proc.request({ id: "e2", method: "chat", params: { input: [{ type: "resource", server: "ghost", uri: "x:y" }] } }, 60_000);
    assert.equal(unknownServer.code, "invalid_request");
    assert.match(String(unknownServer.message), /no MCP server "ghost" is running; running: proto/);
    const both = await proc.request({ id: "e3", method: "chat", params: { input: "hi", prompt: { server: "proto", name: "review" } } }, 60_000);
    assert.equal(both.code, "invalid_request");
    assert.equal(upstream.chats().length, 2);

    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });

  it("JSON-RPC: mcp_prompts and a chat with a prompt", async () => {
    const { proc, upstream } = await serve("jsonrpc");
    const answer = (id: number) => (m: Json): boolean => m.id === id && ("result" in m || "error" in m);
    proc.send({ jsonrpc: "2.0", id: 1, method: "mcp_prompts", params: {} });
    const listed = (await proc.waitFor(answer(1), 60_000)) as Json;
    assert.deepEqual(((listed.result as Json).prompts as Json[]).map((p) => `${String(p.server)}:${String(p.name)}`), ["proto:review"]);
    upstream.push({ text: ["ok"] });
    proc.send({ jsonrpc: "2.0", id: 2, method: "chat", params: { prompt: { server: "proto", name: "review", arguments: { file: "b.ts" } } } });
    const reply = (await proc.waitFor(answer(2), 60_000)) as Json;
    assert.equal((reply.result as Json).response, "ok", JSON.stringify(reply));
    assert.deepEqual((sentAfterSystem(upstream, 0)[0]?.content as Json[])[0], { type: "text", text: "Please review b.ts." });
    proc.send({ jsonrpc: "2.0", id: 3, method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
  });
});
