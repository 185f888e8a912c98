import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TurnOutcome } from "../../src/agent/turn-outcome.js";
import type { ToolSpec } from "../../src/shared/conversation/tool-spec.js";
import { openAiFinishReason } from "../../src/http/openai/completion.js";
import { agentHarness } from "../helpers/agent-harness.js";
import { ScriptedToolProvider } from "../helpers/mcp-scripted-tools.js";
import { callTool, say, ScriptedEngine } from "../helpers/scripted-engine.js";

const echoSchema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
const signal = (): AbortSignal => new AbortController().signal;
const cut = [{ type: "text" as const, delta: "Hel" }, { type: "usage" as const, inputTokens: 12, outputTokens: 3, cachedTokens: 4 }, { type: "end" as const, finishReason: "length" as const }];

describe("the turn outcome of SessionRunner.runTurn and runStateless", () => {
  it("a step cut by max_tokens ends length in both kinds; usage is summed, reasoning kept", async () => {
    const thought = [{ type: "reasoning" as const, delta: "hmm" }, ...cut];
    const h = await agentHarness(new ScriptedEngine([thought, thought]), new ScriptedToolProvider([]));
    const { result } = await h.turn({ session_id: "l", input: "x" });
    assert.deepEqual(result, {
      finish_reason: "length", response: "Hel", reasoning: "hmm", session_id: "l", trace_id: result.trace_id, warnings: [],
      usage: { input_tokens: 12, cached_input_tokens: 4, output_tokens: 3, reasoning_tokens: null, prompt_ms: null },
    });
    const stateless = await h.runner.runStateless({ messages: [{ role: "user", content: "x" }] }, { signal: signal(), emit: () => undefined });
    assert.equal(stateless.finish_reason, "length");
    assert.equal(stateless.session_id, null);
    assert.deepEqual(stateless.usage, { input_tokens: 12, cached_input_tokens: 4, output_tokens: 3, reasoning_tokens: null, prompt_ms: null });
  });

  it("usage of every step of a tool round trip adds up; no cache figure stays null", async () => {
    const h = await agentHarness(new ScriptedEngine([callTool("echo", { text: "hi" }), say("done")]), new ScriptedToolProvider([{ name: "echo", inputSchema: echoSchema }]));
    const { result } = await h.turn({ session_id: "u", input: "x" });
    assert.equal(result.finish_reason, "stop");
    assert.deepEqual(result.usage, { input_tokens: 20, cached_input_tokens: null, output_tokens: 5 + "done".length, reasoning_tokens: null, prompt_ms: null });
  });

  it("paused: the pending call; aborted: the reason", async () => {
    const gated = new ScriptedToolProvider([{ name: "write", inputSchema: echoSchema, requiresApproval: true }]);
    const paused = await agentHarness(new ScriptedEngine([callTool("write", { text: "x" }), callTool("write", { text: "y" })]), gated);
    const { result } = await paused.turn({ session_id: "p", input: "x" });
    assert.equal(result.finish_reason, "paused");
    assert.deepEqual(result.pending_approval, { tool: "write", args: { text: "x" } });
    const stateless = await paused.runner.runStateless({ messages: [{ role: "user", content: "x" }] }, { signal: signal(), emit: () => undefined });
    assert.equal(stateless.finish_reason, "paused");
    assert.deepEqual(stateless.pending_approval, { tool: "write", args: { text: "y" } });

    const looping = await agentHarness(new ScriptedEngine([0, 1].map((i) => callTool("echo", { text: "hi" }, `c${i}`))), new ScriptedToolProvider([{ name: "echo", inputSchema: echoSchema }]), "  max_steps: 2\n");
    const aborted = (await looping.turn({ session_id: "m", input: "x" })).result;
    assert.equal(aborted.finish_reason, "aborted");
    assert.equal(aborted.abort_reason, "max_steps");
    assert.deepEqual(aborted.warnings, ["loop_abort: max_steps"]);
  });

  it("tool_calls: the client's tools the model called, on a stateless turn", async () => {
    const clientTools: ToolSpec[] = [{ name: "lookup", description: "", parameters: { type: "object", properties: {} } }];
    const h = await agentHarness(new ScriptedEngine([callTool("lookup", {}, "c1")]), new ScriptedToolProvider([]));
    const outcome = await h.runner.runStateless({ messages: [{ role: "user", content: "x" }], clientTools }, { signal: signal(), emit: () => undefined });
    assert.equal(outcome.finish_reason, "tool_calls");
    assert.deepEqual(outcome.tool_calls, [{ id: "c1", name: "lookup", arguments: "{}" }]);
  });

  it("OpenAI's finish_reason: length and tool_calls pass, everything else is stop", () => {
    const base: TurnOutcome = { finish_reason: "stop", response: "", reasoning: "", session_id: null, trace_id: "t", warnings: [], usage: { input_tokens: 0, cached_input_tokens: null, output_tokens: 0, reasoning_tokens: null, prompt_ms: null } };
    const reasons: Array<[TurnOutcome["finish_reason"], string]> = [["stop", "stop"], ["length", "length"], ["content_filter", "stop"], ["tool_calls", "tool_calls"], ["paused", "stop"], ["aborted", "stop"]];
    for (const [reason, wire] of reasons) assert.equal(openAiFinishReason({ ...base, finish_reason: reason }), wire, reason);
  });
});
