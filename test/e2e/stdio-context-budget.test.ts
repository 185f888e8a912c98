// The context budget through the built CLI (embedded engine, the demo GGUF's own tokenizer): an
// input that cannot fit and tool schemas that leave no room are clear `context_overflow` errors
// with the numbers, never an opaque failure or a silent truncation.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { everythingServer } from "../helpers/mcp-servers.js";
import { tempConfig } from "../helpers/temp-config.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel, mcpServer } from "../helpers/config-yaml.js";

let demo = "";
before(async () => {
  demo = await ensureFixture("demo");
});

/** `agent`: more settings of `assistant`; `mcp`: the config's MCP servers. */
async function serve(agent: Record<string, unknown>, mcp?: Record<string, unknown>): Promise<CliProcess> {
  const { dir, configPath } = await tempConfig(
    configYaml({ llama: { models: { default: localModel(demo, { ctx_size: 256 }) } }, agents: { assistant: { temperature: 0, max_tokens: 32, ...agent } }, ...(mcp ? { mcp: { servers: mcp } } : {}) }),
  );
  return new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
}

describe("context budget (built CLI, embedded engine)", () => {
  it("an input longer than the window is context_overflow with the numbers; a short one still works", async () => {
    const proc = await serve({ tools: [] });
    const long = await proc.request({ id: 1, method: "chat", params: { session_id: "big", input: "apple ".repeat(400) } }, 30_000);
    assert.equal(long.type, "error", JSON.stringify(long));
    assert.equal(long.code, "context_overflow");
    assert.match(String(long.message), /^The input does not fit the context window: \d+ tokens for this turn, \d+ for the system prompt and tools, 224 available \(ctx_size 256 minus 32 kept for the reply\)/);
    assert.equal((long.details as { config_key: string }).config_key, "llama.models.default.ctx_size");
    const ok = await proc.request({ id: 2, method: "chat", params: { session_id: "small", input: "Hi" } }, 30_000);
    assert.equal(ok.type, "result", JSON.stringify(ok));
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });

  it("tool schemas that leave no room name ctx_size and agents.<name>.tools", async () => {
    const server = everythingServer();
    const proc = await serve({}, { everything: mcpServer(server) });
    const reply = await proc.request({ id: 1, method: "chat", params: { input: "Hi" } }, 60_000);
    assert.equal(reply.code, "context_overflow", JSON.stringify(reply));
    assert.match(String(reply.message), /the schemas of \d+ tools \(\d+ tokens\) leave no room .* narrow agents\.assistant\.tools/);
    assert.equal((reply.details as { config_key: string }).config_key, "agents.assistant.tools");
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
  });
});
