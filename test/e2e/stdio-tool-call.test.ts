import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { before, describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { configYaml, localModel, mcpServer } from "../helpers/config-yaml.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";

const require = createRequire(import.meta.url);
const everything = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js");

let toolModel = "";
before(async () => {
  toolModel = await ensureFixture("demo", { toolMode: true });
});

/** serve-stdio with the demo model in tool mode and the real `everything` MCP server from npm. */
async function serve(engine: Record<string, unknown>, approval: boolean): Promise<CliProcess> {
  const { dir, configPath } = await tempConfig(
    configYaml({
      llama: { ...(Object.keys(engine).length > 0 ? { binary: findLlamaServerBinary() ?? "llama-server" } : {}), models: { default: localModel(toolModel, engine) } },
      agents: { assistant: { temperature: 0, tools: ["echo"] } },
      mcp: { servers: { everything: mcpServer({ command: process.execPath, args: [everything, "stdio"] }, approval ? { requires_approval: ["echo"] } : {}) } },
    }),
  );
  return new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
}

async function stop(proc: CliProcess): Promise<void> {
  proc.send({ id: "bye", method: "shutdown" });
  assert.equal((await proc.exited).code, 0);
  assert.deepEqual(protocolViolations(proc), []);
}

function checkToolTurn(proc: CliProcess, id: string, reply: WireMessage): void {
  assert.equal(reply.type, "result", JSON.stringify(reply));
  assert.equal((reply.result as { response: string }).response, DEMO_SENTENCE);
  const events = proc.messages.filter((m) => m.id === id && m.type === "event");
  // A first turn also reports the model's load (model_load, before memory_start): not this test's subject.
  const trail = events.filter((e) => e.event !== "llm_chunk" && e.event !== "model_load").map((e) => `${String(e.event)}${typeof e.step === "number" ? `@${e.step}` : ""}`);
  assert.deepEqual(trail, ["run_start", "memory_start", "llm_start@0", "usage@0", "llm_done@0", "tool_start@0", "tool_done@0", "llm_start@1", "usage@1", "llm_done@1", "final@1"]);
  const start = events.find((e) => e.event === "tool_start");
  assert.deepEqual({ tool: start?.tool, args: start?.args }, { tool: "echo", args: { message: "hi" } });
  const done = events.find((e) => e.event === "tool_done");
  assert.equal(done?.status, "ok");
  assert.equal(done?.tool, "echo");
  assert.match(String(done?.preview), /Echo: hi/);
  assert.equal(done?.retryable, false);
}

for (const [name, engine] of [
  ["embedded", {}],
  ["llama-server", { engine: "llama-server", port: 18481 }],
] as const) {
  describe(`a real tool call end to end (${name} engine, MCP server-everything)`, () => {
    it("the engine emits the call, the MCP echo tool runs, the model answers after the result", async (t) => {
      if (name === "llama-server" && findLlamaServerBinary() === null) {
        process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
        t.skip("llama-server not built: run npm run build:llama-server");
        return;
      }
      const proc = await serve(engine, false);
      const reply = await proc.request({ id: "t1", method: "chat", params: { session_id: "tools", input: `please ${DEMO_TOOL_TRIGGER} hi` } }, 60_000);
      checkToolTurn(proc, "t1", reply);
      await stop(proc);
    });
  });
}

describe("approval through the wire (embedded engine, MCP server-everything)", () => {
  it("pauses before echo, then resume with approve_execution runs it", async () => {
    const proc = await serve({}, true);
    const paused = await proc.request({ id: "a1", method: "chat", params: { session_id: "ap", input: `${DEMO_TOOL_TRIGGER} hi` } }, 60_000);
    assert.equal(paused.type, "result");
    const result = paused.result as { warnings: string[]; pending_approval: unknown; response: string };
    assert.deepEqual(result.warnings, ["approval_required: echo"]);
    assert.deepEqual(result.pending_approval, { tool: "echo", args: { message: "hi" } });
    const events = proc.messages.filter((m) => m.id === "a1" && m.event === "tool_done");
    assert.equal(events[0]?.status, "approval_required");
    assert.equal(proc.messages.some((m) => m.id === "a1" && m.event === "tool_start"), false);
    const resumed = await proc.request({ id: "a2", method: "chat", params: { session_id: "ap", resume: true, approve_execution: true } }, 60_000);
    assert.equal((resumed.result as { response: string }).response, DEMO_SENTENCE);
    const done = proc.messages.find((m) => m.id === "a2" && m.event === "tool_done");
    assert.equal(done?.status, "ok");
    await stop(proc);
  });
});

describe("--mcp-config with the common mcpServers JSON shape", () => {
  it("adds its servers to the config, and a broken file is reported, not fatal", async () => {
    const { dir, configPath } = await tempConfig(
      configYaml({ llama: { models: { default: localModel(toolModel) } }, agents: { assistant: { temperature: 0, tools: ["echo"] } } }),
    );
    const mcpFile = path.join(dir, "mcp.json");
    await writeFile(mcpFile, JSON.stringify({ mcpServers: { everything: { type: "stdio", command: process.execPath, args: [everything, "stdio"] } } }));
    const proc = new CliProcess(["serve-stdio", "--config", configPath, "--mcp-config", mcpFile], { cwd: dir });
    const reply = await proc.request({ id: "m1", method: "chat", params: { input: `${DEMO_TOOL_TRIGGER} hi` } }, 60_000);
    assert.equal((reply.result as { response: string }).response, DEMO_SENTENCE);
    assert.equal(proc.messages.find((m) => m.id === "m1" && m.event === "tool_done")?.status, "ok");
    await stop(proc);

    await writeFile(mcpFile, '{"mcpServers": {"x": {"args": 5}}}');
    const broken = new CliProcess(["serve-stdio", "--config", configPath, "--mcp-config", mcpFile], { cwd: dir });
    const error = await broken.request({ id: 1, method: "chat", params: { input: "hi" } });
    assert.equal(error.code, "config_invalid");
    assert.match(String(error.message), /mcp\.json/);
    assert.equal((await broken.request({ id: 2, method: "ping" })).type, "result");
    await stop(broken);
  });
});
