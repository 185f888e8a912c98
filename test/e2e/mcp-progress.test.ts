// MCP progress and logging notifications through the built CLI: a real MCP server (the SDK's
// McpServer) reports progress while a tool runs and logs a message; the chat carries
// `tool_progress` events between the call's tool_start and tool_done, and the server's log
// message reaches our log (stderr) at debug.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

const PROTOCOL_SERVER = fileURLToPath(new URL("../helpers/mcp-protocol-server.js", import.meta.url));

let upstream: AgentUpstream | undefined;
let proc: CliProcess | undefined;
after(async () => {
  if (proc !== undefined && proc.child.exitCode === null) proc.child.kill("SIGKILL");
  await upstream?.close();
});

describe("MCP progress and logging notifications", () => {
  it("tool_progress events while the tool runs; the server's log message in our debug log", async () => {
    upstream = await startAgentUpstream([{ call: { id: "c1", name: "count", arguments: {} } }, { text: ["done"] }]);
    const { dir, configPath } = await tempConfig(
      configYaml({
        llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } },
        agents: { assistant: { temperature: 0, tools: ["count"] } },
        mcp: { servers: { proto: mcpServer({ command: process.execPath, args: [PROTOCOL_SERVER] }) } },
      }),
    );
    proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "debug" } });
    const reply = await proc.request({ id: "t1", method: "chat", params: { session_id: "progress", input: "count" } }, 60_000);
    assert.equal((reply.result as Record<string, unknown>).response, "done", JSON.stringify(reply));
    assert.equal(toolResultSent(upstream, "c1"), "counted");
    const events = proc.messages.filter((m) => m.id === "t1" && m.type === "event" && typeof m.event === "string" && m.event.startsWith("tool_"));
    assert.deepEqual(
      events.map(({ event, step, tool, progress, total, message }) => ({ event, step, tool, progress, total, message })),
      [
        { event: "tool_start", step: 0, tool: "count", progress: undefined, total: undefined, message: undefined },
        { event: "tool_progress", step: 0, tool: "count", progress: 1, total: 3, message: "at 1" },
        { event: "tool_progress", step: 0, tool: "count", progress: 2, total: 3, message: "at 2" },
        { event: "tool_progress", step: 0, tool: "count", progress: 3, total: 3, message: "at 3" },
        { event: "tool_done", step: 0, tool: "count", progress: undefined, total: undefined, message: undefined },
      ],
    );
    const logged = proc.stderr.split("\n").filter((line) => line.includes("MCP server log")).map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(logged.length, 1, proc.stderr.slice(-2000));
    assert.deepEqual({ level: logged[0]?.level, logger: logged[0]?.logger, data: logged[0]?.data, server: logged[0]?.server }, { level: "info", logger: "counter", data: "counting to 3", server: "proto" });
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });
});
