// The terminal chat's MCP prompts and resources (piped stdin, the built CLI): `/prompts` lists,
// `/<server>:<prompt> arg=value` opens a turn with the prompt, `@server:uri` attaches a resource;
// a real MCP server (the SDK's McpServer) and a scripted upstream show what the model got.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { runCli } from "../helpers/run-cli.js";
import { tempConfig } from "../helpers/temp-config.js";

const PROTOCOL_SERVER = fileURLToPath(new URL("../helpers/mcp-protocol-server.js", import.meta.url));

type Json = Record<string, unknown>;

let upstream: AgentUpstream | undefined;
after(async () => {
  await upstream?.close();
});

describe("local-ai chat: MCP prompts and resources", () => {
  it("/prompts lists, /server:prompt runs one, @server:uri attaches a resource, bad arguments are explained", async () => {
    upstream = await startAgentUpstream([{ text: ["reviewed"] }, { text: ["summarized"] }]);
    const { dir, configPath } = await tempConfig(
      configYaml({
        llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } },
        agents: { assistant: { temperature: 0, tools: [], memory: false } },
        mcp: { servers: { proto: mcpServer({ command: process.execPath, args: [PROTOCOL_SERVER] }) } },
      }),
    );
    const input = ['/prompts', '/proto:review file=a.ts tone="very kind"', "/proto:review file", "sum up @proto:file:///docs/notes.txt and @nobody:x please"].join("\n");
    const run = await runCli(["chat", "--config", configPath], dir, { input: `${input}\n` });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "reviewed\nsummarized\n");
    assert.match(run.stderr, /^\/proto:review file=… \[tone=…\] {2}Review a file$/m);
    assert.match(run.stderr, /^\/proto:review: arguments are name=value pairs \(a value with blanks in double quotes\); could not read "file"$/m);
    const sent = (index: number): Json[] => (upstream?.chats()[index]?.body as { messages: Json[] }).messages.slice(1);
    assert.deepEqual((sent(0)[0]?.content as Json[])[0], { type: "text", text: "Please review a.ts in a very kind tone." });
    assert.deepEqual(sent(1).at(-1), {
      role: "user",
      content: [
        { type: "text", text: "sum up " },
        { type: "text", text: "[resource: file:///docs/notes.txt]\nthe notes" },
        { type: "text", text: " and @nobody:x please" },
      ],
    });
    assert.equal(upstream.chats().length, 2);
  });
});
