// A stateless turn with tools of its own request (the Responses API's `mcp` tools) beside the
// client's functions: calls of the request's tools run inside the turn, the client's go back;
// a gated call pauses a `pausable` turn, and a later turn resumes it from the conversation.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ChatMessage } from "../../src/shared/conversation/chat-message.js";
import type { EngineChunk } from "../../src/engine/chat-types.js";
import type { ToolSpec } from "../../src/shared/conversation/tool-spec.js";
import { agentHarness } from "../helpers/agent-harness.js";
import { ScriptedToolProvider } from "../helpers/mcp-scripted-tools.js";
import { callTool, say, ScriptedEngine } from "../helpers/scripted-engine.js";

const signal = (): AbortSignal => new AbortController().signal;
const noArgs = { type: "object", properties: {} };
const lookup: ToolSpec[] = [{ name: "lookup", description: "", parameters: noArgs }];
const user: ChatMessage = { role: "user", content: "x" };

/** One step that calls the request's `roll` and the client's `lookup`. */
const both: EngineChunk[] = [
  { type: "tool_call_start", index: 0, id: "r1", name: "roll" },
  { type: "tool_call", index: 0, call: { id: "r1", name: "roll", arguments: "{}" } },
  { type: "tool_call_start", index: 1, id: "c1", name: "lookup" },
  { type: "tool_call", index: 1, call: { id: "c1", name: "lookup", arguments: "{}" } },
  { type: "usage", inputTokens: 10, outputTokens: 5 },
  { type: "end", finishReason: "tool_calls" },
];

describe("stateless turns with the request's own tools", () => {
  it("one step calling both: the request's tool runs, only the client's call comes back; the conversation is in turn_messages", async () => {
    const requestTools = new ScriptedToolProvider([{ name: "roll", inputSchema: noArgs }]);
    const h = await agentHarness(new ScriptedEngine([both]), new ScriptedToolProvider([{ name: "agent_tool", inputSchema: noArgs }]));
    const outcome = await h.runner.runStateless({ messages: [user], clientTools: lookup, tools: requestTools, pausable: true }, { signal: signal(), emit: () => undefined });
    assert.equal(outcome.finish_reason, "tool_calls");
    assert.deepEqual(outcome.tool_calls, [{ id: "c1", name: "lookup", arguments: "{}" }]);
    assert.deepEqual(requestTools.callsTo("roll").length, 1);
    assert.deepEqual(outcome.turn_messages?.map((m) => [m.role, m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : m.role === "tool" ? m.tool_call_id : null]), [
      ["assistant", ["r1", "c1"]],
      ["tool", "r1"],
    ]);
  });

  it("a gated call pauses a pausable turn (no warning); resumed with approve it runs and the turn goes on", async () => {
    const requestTools = new ScriptedToolProvider([{ name: "roll", inputSchema: noArgs, requiresApproval: true }]);
    const h = await agentHarness(new ScriptedEngine([callTool("roll", {}, "r1"), say("rolled")]), new ScriptedToolProvider([]));
    const paused = await h.runner.runStateless({ messages: [user], tools: requestTools, pausable: true }, { signal: signal(), emit: () => undefined });
    assert.equal(paused.finish_reason, "paused");
    assert.deepEqual(paused.warnings, []);
    assert.equal(requestTools.callsTo("roll").length, 0);
    const resumed = await h.runner.runStateless({ messages: [user, ...(paused.turn_messages ?? [])], tools: requestTools, pausable: true, resumeDecision: "approve" }, { signal: signal(), emit: () => undefined });
    assert.equal(resumed.finish_reason, "stop");
    assert.equal(resumed.response, "rolled");
    assert.equal(requestTools.callsTo("roll").length, 1);
    assert.deepEqual(resumed.turn_messages?.map((m) => m.role), ["tool", "assistant"]);
  });
});
