import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { agentHarness } from "../helpers/agent-harness.js";
import { ScriptedToolProvider } from "../helpers/mcp-scripted-tools.js";
import { say, ScriptedEngine } from "../helpers/scripted-engine.js";
import { waitUntil } from "../helpers/wait-until.js";

const CHILD = fileURLToPath(new URL("../helpers/agent-crash-child.js", import.meta.url));

describe("resume after a crash (a child process killed mid-turn)", () => {
  it("runs no completed tool twice and finishes the turn", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "local-ai-crash-"));
    const marker = path.join(dataDir, "runs.log");
    const child = spawn(process.execPath, [CHILD, dataDir, marker], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => (out += chunk));
    await waitUntil(() => out.includes("slow-start"), [{ emitter: child.stdout, event: "data" }], 20_000, () => `child stdout: ${out}`);
    assert.equal(await readFile(marker, "utf8"), "fast\nslow-start\n");
    child.kill("SIGKILL");
    assert.equal(await exited, "SIGKILL");

    const schema = { type: "object", properties: {} };
    const tools = new ScriptedToolProvider([
      { name: "fast", inputSchema: schema, replies: { content: "fast again?!" } },
      { name: "slow", inputSchema: schema, replies: { content: "slow done" } },
    ]);
    const engine = new ScriptedEngine([say("both done")]);
    const h = await agentHarness(engine, tools, "", dataDir);
    const { result, events } = await h.turn({ session_id: "crash", resume: true });
    assert.equal(result.response, "both done");
    assert.deepEqual(tools.calls.map((c) => c.name), ["slow"], "the completed fast call is not run again");
    assert.deepEqual(events.filter((e) => e.event === "tool_start").map((e) => e.event === "tool_start" && e.tool), ["slow"]);
    const sent = engine.requests[0]!.messages.filter((m) => m.role === "tool").map((m) => (m.role === "tool" ? m.content : ""));
    assert.deepEqual(sent, ["fast done", "slow done"]);
    const history = await h.store.sessions.loadHistory("default_user", "crash");
    assert.deepEqual(history.warnings, []);
    assert.equal(history.messages.at(-1)?.role, "assistant");
  });
});
