// `local-ai chat` and an MCP server's question (elicitation/create, form mode): in a real
// pseudo-terminal the chat asks the form's fields mid-turn (a wrong value is asked again) and the
// server's tool result the model (a scripted upstream) sees carries the answer; with piped stdin
// nobody can be asked, so the server gets a decline and stderr says why.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { PtyCli } from "../helpers/pty-cli.js";
import { runCli } from "../helpers/run-cli.js";
import { tempConfig } from "../helpers/temp-config.js";

const ELICIT_SERVER = fileURLToPath(new URL("../helpers/mcp-elicit-server.js", import.meta.url));

const upstreams: AgentUpstream[] = [];
after(async () => {
  await Promise.all(upstreams.map((upstream) => upstream.close()));
});

async function setup(): Promise<{ upstream: AgentUpstream; dir: string; configPath: string }> {
  const upstream = await startAgentUpstream([{ call: { id: "c1", name: "ask", arguments: {} } }, { text: ["thanks"] }]);
  upstreams.push(upstream);
  const { dir, configPath } = await tempConfig(
    configYaml({
      llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } },
      agents: { assistant: { temperature: 0, memory: false } },
      mcp: { servers: { people: mcpServer({ command: process.execPath, args: [ELICIT_SERVER] }) } },
    }),
  );
  return { upstream, dir, configPath };
}

describe("local-ai chat: an MCP server's question", () => {
  it("in a terminal: asks each field, asks again after a wrong value, and the server gets the answer", async () => {
    const { upstream, dir, configPath } = await setup();
    const chat = new PtyCli(["chat", "--config", configPath, "--session", "s"], { cwd: dir });
    let at = (await chat.waitFor(/> $/m, 0, 20_000)).end;
    chat.type("ask me\r");
    at = (await chat.waitFor(/people asks: What is your name\?/, at, 20_000)).end;
    at = (await chat.waitFor(/Your name: $/m, at, 20_000)).end;
    chat.type("Ann\r");
    at = (await chat.waitFor(/age \[number\] \(optional\): $/m, at, 20_000)).end;
    chat.type("seven\r");
    at = (await chat.waitFor(/not a number\n/, at, 20_000)).end;
    at = (await chat.waitFor(/age \[number\] \(optional\): $/m, at, 20_000)).end;
    chat.type("7\r");
    at = (await chat.waitFor(/thanks/, at, 20_000)).end;
    // Keys typed while the turn runs are the turn's (Ctrl-C): /exit waits for the prompt.
    await chat.waitFor(/> $/m, at, 20_000);
    assert.equal(toolResultSent(upstream, "c1"), 'answer: accept {"name":"Ann","age":7}');
    chat.type("/exit\r");
    assert.equal((await chat.exited).code, 0, chat.text);
  });

  it("with piped stdin: declined, with the reason on stderr", async () => {
    const { upstream, dir, configPath } = await setup();
    const run = await runCli(["chat", "--config", configPath], dir, { input: "ask me\n" });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "thanks\n");
    assert.match(run.stderr, /^declined people's question \("What is your name\?"\): with stdin not a terminal nobody can be asked$/m);
    assert.equal(toolResultSent(upstream, "c1"), "answer: decline null");
  });
});
