// serve-http session mode and an MCP server's question (elicitation/create, form mode): the chat
// completion pauses with local_ai.pending_elicitation while the call keeps running; the next
// request (session_id, resume: true, elicitation) answers it and gets the model's answer; the
// model (a scripted upstream) saw the server's result carrying the answer.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";

const ELICIT_SERVER = fileURLToPath(new URL("../helpers/mcp-elicit-server.js", import.meta.url));
const QUESTION = {
  server: "people",
  message: "What is your name?",
  requested_schema: { type: "object", properties: { name: { type: "string", title: "Your name" }, age: { type: "number" } }, required: ["name"] },
};

let upstream: AgentUpstream | undefined;
let server: HttpServer | undefined;
after(async () => {
  await server?.stop();
  await upstream?.close();
});

type Completion = { choices: Array<{ message: { content: string }; finish_reason: string }>; local_ai: { pending_elicitation?: unknown; pending_approval?: unknown } };

async function post(body: Record<string, unknown>): Promise<Completion> {
  assert.ok(server);
  const response = await fetch(`${server.base}/v1/chat/completions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Completion;
}

describe("serve-http session mode: MCP elicitation", () => {
  it("pauses with local_ai.pending_elicitation; resume + elicitation answers the server and finishes the turn", async () => {
    upstream = await startAgentUpstream([{ call: { id: "c1", name: "ask", arguments: {} } }, { text: ["thanks"] }]);
    server = await startHttpServer(
      configYaml({
        llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } },
        agents: { assistant: { temperature: 0, memory: false } },
        mcp: { servers: { people: mcpServer({ command: process.execPath, args: [ELICIT_SERVER] }) } },
      }),
    );
    const paused = await post({ model: "assistant", session_id: "e1", messages: [{ role: "user", content: "ask me" }] });
    assert.equal(paused.choices[0]?.finish_reason, "stop");
    assert.equal(paused.choices[0]?.message.content, "");
    assert.deepEqual(paused.local_ai.pending_elicitation, QUESTION);
    const done = await post({ model: "assistant", session_id: "e1", messages: [], resume: true, elicitation: { action: "accept", content: { name: "Ann" } } });
    assert.equal(done.choices[0]?.message.content, "thanks");
    assert.equal(done.local_ai.pending_elicitation, undefined);
    assert.equal(toolResultSent(upstream, "c1"), 'answer: accept {"name":"Ann"}');
  });
});
