import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PromMetrics } from "../../src/app/metrics/prom-metrics.js";
import type { MetricsSnapshot } from "../../src/protocol/methods/metrics.js";
import { agentHarness } from "../helpers/agent-harness.js";
import { ScriptedToolProvider } from "../helpers/mcp-scripted-tools.js";
import { callTool, say, ScriptedEngine } from "../helpers/scripted-engine.js";

const schema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };

const toolCalls = (snapshot: MetricsSnapshot): Array<[string, number]> =>
  (snapshot.metrics.find((series) => series.name === "local_ai_tool_calls_total")?.samples ?? [])
    .map((sample): [string, number] => [`${sample.labels.agent}/${sample.labels.server}/${sample.labels.tool}/${sample.labels.outcome}`, sample.value])
    .sort(([a], [b]) => a.localeCompare(b));
const waiting = (snapshot: MetricsSnapshot): number | undefined => snapshot.metrics.find((series) => series.name === "local_ai_approvals_waiting")?.samples[0]?.value;

describe("the agent's tool calls and approvals in the metrics (SessionRunner, scripted engine and tools)", () => {
  it("counts every settled call by agent, server, tool and outcome; a made-up tool name never becomes a label", async () => {
    const engine = new ScriptedEngine([
      callTool("echo", { text: "hi" }, "c1"),
      callTool("made-up-tool-9f3", { text: "x" }, "c2"),
      callTool("flaky", { text: "x" }, "c3"),
      callTool("write", { text: "x" }, "c4"),
      say("done"),
    ]);
    const tools = new ScriptedToolProvider([
      { name: "echo", inputSchema: schema, replies: { content: "echo: hi" } },
      { name: "flaky", inputSchema: schema, server: "remote", replies: { status: "timeout", content: "too slow" } },
      { name: "write", inputSchema: schema, requiresApproval: true, replies: { content: "ok" } },
    ]);
    const metrics = new PromMetrics(() => null);
    const h = await agentHarness(engine, tools, "", undefined, metrics);
    let duringAsk: number | undefined;
    const { result } = await h.turn({ session_id: "m1", input: "go" }, undefined, {
      askApproval: async () => {
        // Asked mid-turn: the gauge says one approval is waiting on the user right now.
        duringAsk = waiting(await metrics.snapshot());
        return "approve";
      },
    });
    assert.equal(result.response, "done");
    assert.equal(duringAsk, 1);
    const after = await metrics.snapshot();
    assert.equal(waiting(after), 0);
    assert.deepEqual(toolCalls(after), [
      ["assistant/none/unknown/error", 1],
      ["assistant/remote/flaky/timeout", 1],
      ["assistant/scripted/echo/ok", 1],
      ["assistant/scripted/write/ok", 1],
    ]);
  });

  it("a call that pauses the turn for approval is counted as approval_required", async () => {
    const engine = new ScriptedEngine([callTool("write", { text: "x" }), say("unused")]);
    const tools = new ScriptedToolProvider([{ name: "write", inputSchema: schema, requiresApproval: true }]);
    const metrics = new PromMetrics(() => null);
    const h = await agentHarness(engine, tools, "", undefined, metrics);
    const { result } = await h.turn({ session_id: "m2", input: "go" });
    assert.equal(result.finish_reason, "paused");
    assert.deepEqual(toolCalls(await metrics.snapshot()), [["assistant/scripted/write/approval_required", 1]]);
    assert.equal(waiting(await metrics.snapshot()), 0, "a paused turn waits for nobody in the process");
  });
});
