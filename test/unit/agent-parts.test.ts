import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fitContext } from "../../src/agent/context-budget.js";
import { memoryPreamble, renderForModel } from "../../src/agent/prompt.js";
import type { ToolSpec } from "../../src/shared/conversation/tool-spec.js";
import type { Engine } from "../../src/engine/engine.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { extractTextToolCalls } from "../../src/agent/text-tool-calls.js";
import { ThinkSplitter } from "../../src/agent/think-splitter.js";
import { checkToolArguments } from "../../src/agent/tool-arguments.js";
import { capToolOutput, previewOf, unansweredCalls } from "../../src/agent/turn-state.js";
import type { ChatMessage } from "../../src/shared/conversation/chat-message.js";
import type { ToolDescriptor } from "../../src/tools/tool-types.js";

function splitAll(deltas: string[]): { text: string; thinking: string } {
  const splitter = new ThinkSplitter();
  let text = "";
  let thinking = "";
  for (const delta of [...deltas.map((d) => splitter.push(d)), splitter.flush()]) {
    text += delta.text;
    thinking += delta.thinking;
  }
  return { text, thinking };
}

const echo: ToolDescriptor = {
  name: "echo",
  server: "s",
  remoteName: "echo",
  requiresApproval: false,
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
};

describe("ThinkSplitter", () => {
  it("separates <think> blocks from the answer, even with tags split across deltas", () => {
    assert.deepEqual(splitAll(["<thi", "nk>plan it</th", "ink>Hello", " world"]), { text: "Hello world", thinking: "plan it" });
    assert.deepEqual(splitAll(["a < b and <", "b> stays"]), { text: "a < b and <b> stays", thinking: "" });
    assert.deepEqual(splitAll(["<think>unfinished"]), { text: "", thinking: "unfinished" });
  });
});

describe("text tool-call fallback", () => {
  it("reads Hermes-style blocks and reports unreadable ones", () => {
    const { calls, rest } = extractTextToolCalls('Sure.<tool_call>{"name": "echo", "arguments": {"text": "hi"}}</tool_call>');
    assert.equal(rest, "Sure.");
    assert.equal(calls[0]?.name, "echo");
    assert.deepEqual(JSON.parse(calls[0]?.arguments ?? ""), { text: "hi" });
    const bad = extractTextToolCalls("<tool_call>{not json</tool_call>");
    assert.equal(bad.calls[0]?.name, "");
    assert.match(bad.calls[0]?.error ?? "", /not valid JSON/);
    assert.deepEqual(extractTextToolCalls("plain answer"), { calls: [], rest: "plain answer" });
  });
});

describe("checkToolArguments", () => {
  it("accepts valid arguments and explains invalid ones", () => {
    assert.deepEqual(checkToolArguments(echo, '{"text":"hi"}'), { ok: true, args: { text: "hi" } });
    const notJson = checkToolArguments(echo, "{text: hi}");
    assert.ok(!notJson.ok && /not valid JSON/.test(notJson.problem));
    const notObject = checkToolArguments(echo, "[1]");
    assert.ok(!notObject.ok && /JSON object/.test(notObject.problem));
    const wrong = checkToolArguments(echo, '{"text": 5}');
    assert.ok(!wrong.ok && /text/.test(wrong.problem));
  });
});

describe("prompt", () => {
  it("puts memory snippets before the turn's user message, after everything that stays the same", () => {
    assert.equal(memoryPreamble([]), undefined);
    const preamble = memoryPreamble([{ text: "the cat is\nnamed Tom", source: "s", score: 1 }]);
    assert.match(preamble ?? "", /^Possibly relevant notes.*\n- the cat is named Tom$/);
    const turn: ChatMessage[] = [{ role: "user", content: "Who is Tom?", preamble: preamble ?? "" }, { role: "assistant", content: "A cat." }];
    assert.deepEqual(renderForModel(turn), [{ role: "user", content: `${preamble ?? ""}\n\nWho is Tom?` }, { role: "assistant", content: "A cat." }]);
    assert.equal(turn[0]?.role === "user" ? turn[0].content : "", "Who is Tom?", "the stored message keeps what the user wrote");
    assert.deepEqual(renderForModel([{ role: "user", content: [{ type: "text", text: "hi" }], preamble: "n" }]), [{ role: "user", content: [{ type: "text", text: "n" }, { type: "text", text: "hi" }] }]);
    assert.deepEqual(renderForModel([{ role: "user", content: "plain" }]), [{ role: "user", content: "plain" }]);
  });

  it("gives the images tools returned in one user message after the step's tool results, only to a model that takes images", () => {
    const png = { type: "image_url" as const, image_url: { url: "data:image/png;base64,AAAA" } };
    const gif = { type: "image_url" as const, image_url: { url: "data:image/gif;base64,BBBB" } };
    const turn: ChatMessage[] = [
      { role: "user", content: "look" },
      { role: "assistant", content: "", tool_calls: [{ id: "a", name: "shot", arguments: "{}" }, { id: "b", name: "echo", arguments: "{}" }, { id: "c", name: "gif", arguments: "{}" }] },
      { role: "tool", tool_call_id: "a", name: "shot", content: "[image: image/png, 3 bytes]", images: [png] },
      { role: "tool", tool_call_id: "b", name: "echo", content: "hi" },
      { role: "tool", tool_call_id: "c", name: "gif", content: "[image: image/gif, 3 bytes]", images: [gif, gif] },
      { role: "assistant", content: "seen" },
    ];
    const textOnly = turn.map((m) => (m.role === "tool" ? { role: m.role, tool_call_id: m.tool_call_id, name: m.name, content: m.content } : m));
    assert.deepEqual(renderForModel(turn), textOnly);
    assert.deepEqual(renderForModel(turn, { images: true }), [
      ...textOnly.slice(0, 5),
      { role: "user", content: [{ type: "text", text: "The image shot returned (call a):" }, png, { type: "text", text: "The images gif returned (call c):" }, gif, gif] },
      textOnly[5],
    ]);
    // Rendering what was rendered changes nothing (the loop renders the fitted context again).
    assert.deepEqual(renderForModel(renderForModel(turn, { images: true }), { images: true }), renderForModel(turn, { images: true }));
  });

  it("drops history oldest-first in whole turns (counted by the model's tokenizer) and keeps system and current turn", async () => {
    const turnOf = (i: number): ChatMessage[] => [
      { role: "user", content: `question ${i} ${"x".repeat(300)}` },
      { role: "assistant", content: "", tool_calls: [{ id: `c${i}`, name: "echo", arguments: "{}" }] },
      { role: "tool", tool_call_id: `c${i}`, name: "echo", content: "y".repeat(300) },
      { role: "assistant", content: `answer ${i}` },
    ];
    const history = [0, 1, 2, 3, 4].flatMap(turnOf);
    const system: ChatMessage = { role: "system", content: "sys" };
    const turn: ChatMessage[] = [{ role: "user", content: "now" }];
    // A "tokenizer" of one token per character, and 8 tokens of template overhead per message.
    const engine = { kind: "embedded", modelName: "m", countTokens: async (text: string) => text.length, toolTokens: async (t: ToolSpec[]) => JSON.stringify(t).length } as unknown as Engine;
    const fit = (ctxSize: number, tools: ToolSpec[] = []) => fitContext({ engine, agentName: "a", modelName: "m", system, history, turn, tools, ctxSize, maxTokens: 100, signal: new AbortController().signal });
    const all = await fit(100_000);
    assert.equal(all.droppedMessages, 0);
    const chars = (messages: ChatMessage[]): number => messages.reduce((sum, m) => sum + 8 + (m.role === "assistant" ? m.content.length + (m.tool_calls ?? []).reduce((n, c) => n + c.name.length + c.arguments.length, 0) : typeof m.content === "string" ? m.content.length : 0), 0);
    const budget = chars(history.slice(8)) + chars([system, ...turn]) + 100 + 5;
    const cut = await fit(budget);
    assert.equal(cut.droppedMessages, 8);
    assert.deepEqual(cut.context[0], system);
    assert.equal(cut.context[1]?.role, "user");
    // Tools that leave no room, and an input that cannot fit: context_overflow with the numbers.
    const tools: ToolSpec[] = [{ name: "t", parameters: { type: "object", description: "z".repeat(500) } }];
    await assert.rejects(fit(500, tools), (e: unknown) => e instanceof RuntimeError && e.code === "context_overflow" && /schemas of 1 tools .* agents\.a\.tools/.test(e.message) && e.details?.config_key === "agents.a.tools");
    await assert.rejects(fit(24), (e: unknown) => e instanceof RuntimeError && e.code === "context_overflow" && e.details?.config_key === "llama.models.m.ctx_size");
  });
});

describe("context budget: a cut that stays put", () => {
  it("trims half the window at a time, so most turns of a long conversation keep the same cut (and their cached prefix)", async () => {
    const system: ChatMessage = { role: "system", content: "sys" };
    // One token per character, 8 per message of template overhead: each turn here is ~120 tokens.
    const engine = { kind: "embedded", modelName: "m", countTokens: async (text: string) => text.length } as unknown as Engine;
    const window = 2000;
    const history: ChatMessage[] = [];
    const cuts: number[] = [];
    for (let i = 0; i < 60; i++) {
      const turn: ChatMessage[] = [{ role: "user", content: `q${i} ${"x".repeat(40 + (i % 7) * 5)}` }];
      const fit = await fitContext({ engine, agentName: "a", modelName: "m", system, history, turn, tools: [], ctxSize: window, maxTokens: 200, signal: new AbortController().signal });
      // Whatever is kept fits: system + kept history + this turn + the reply's reserve.
      const kept = fit.context.slice(1).reduce((sum, m) => sum + 8 + (typeof m.content === "string" ? m.content.length : 0), 0);
      assert.ok(8 + 3 + kept + 8 + contentLength(turn[0]) + 200 <= window, `turn ${i}: ${kept} tokens of history kept`);
      assert.equal(fit.context[1]?.role ?? "user", "user", "a cut lands on a user message");
      cuts.push(fit.droppedMessages);
      history.push(...turn, { role: "assistant", content: `a${i} ${"y".repeat(50)}` });
    }
    const moves = cuts.filter((cut, i) => i > 0 && cut !== cuts[i - 1]);
    assert.ok(cuts.every((cut, i) => i === 0 || cut >= (cuts[i - 1] ?? 0)), `the cut never moves back: ${cuts.join(",")}`);
    assert.ok(cuts.at(-1)! > 0, "the conversation did outgrow the window");
    // 60 turns of ~120 tokens against a 1,800-token budget: the tightest cut would move on almost
    // every turn after the window fills (~45 moves); half the window at a time moves ~1 in 8.
    const trimmedTurns = cuts.filter((cut) => cut > 0).length;
    assert.ok(moves.length * 5 <= trimmedTurns, `${moves.length} moves over ${trimmedTurns} trimmed turns: ${cuts.join(",")}`);
    for (let i = 1; i < cuts.length; i++) {
      if (cuts[i] === cuts[i - 1]) continue;
      const dropped = history.slice(cuts[i - 1], cuts[i]).reduce((sum, m) => sum + 8 + contentLength(m), 0);
      assert.ok(dropped >= window / 2 - 200, `turn ${i} dropped only ${dropped} tokens`);
    }
  });
});

function contentLength(message: ChatMessage | undefined): number {
  return typeof message?.content === "string" ? message.content.length : 0;
}

describe("turn state helpers", () => {
  it("finds the calls of the last assistant message that have no result", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: "", tool_calls: [{ id: "a", name: "x", arguments: "{}" }, { id: "b", name: "y", arguments: "{}" }] },
      { role: "tool", tool_call_id: "a", name: "x", content: "done" },
    ];
    assert.deepEqual(unansweredCalls(messages).map((c) => c.id), ["b"]);
    assert.deepEqual(unansweredCalls([...messages, { role: "tool", tool_call_id: "b", name: "y", content: "ok" }]), []);
    assert.deepEqual(unansweredCalls([{ role: "user", content: "hi" }]), []);
  });

  it("caps tool output with a marker and makes one-line previews", () => {
    assert.equal(capToolOutput("short", 100), "short");
    const capped = capToolOutput("é".repeat(100), 51);
    assert.match(capped, /\n…\[truncated \d+ bytes\]$/);
    assert.ok(!capped.includes("\uFFFD"));
    assert.equal(previewOf("a\n  b\tc"), "a b c");
    assert.equal(previewOf("z".repeat(500)).length, 160);
  });
});
