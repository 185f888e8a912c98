import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import type { AgentEvent } from "../../src/agent/events.js";
import { ChatApprovals, parseApprovalAnswer } from "../../src/terminal/chat-approvals.js";
import { parseChatCommand } from "../../src/terminal/chat-command.js";
import type { ChatInput } from "../../src/terminal/chat-input.js";
import { LineWriter } from "../../src/terminal/line-writer.js";
import { LoadProgressBar } from "../../src/terminal/load-progress-bar.js";
import { createStyle, wantsColor } from "../../src/terminal/terminal-style.js";
import { oneLine } from "../../src/terminal/tool-line.js";
import { TurnPrinter } from "../../src/terminal/turn-printer.js";
import { UsageTally } from "../../src/terminal/usage-tally.js";

/** A stream that keeps what was written; `tty` makes it look like a terminal of `columns` columns. */
function sink(tty = false, columns = 100): { writer: LineWriter; text: () => string } {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number };
  if (tty) {
    stream.isTTY = true;
    stream.columns = columns;
  }
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  return { writer: new LineWriter(stream), text: () => text };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const TOOL_TURN: AgentEvent[] = [
  { event: "run_start", user_input: "hi", trace_id: "t", session_id: "s", agent: "a" },
  { event: "memory_start", snippets: 0 },
  { event: "llm_start", step: 0 },
  { event: "thinking_chunk", step: 0, delta: "let me " },
  { event: "thinking_chunk", step: 0, delta: "check" },
  { event: "llm_chunk", step: 0, delta: "Checking." },
  { event: "usage", step: 0, input_tokens: 100, output_tokens: 10, cached_input_tokens: 40 },
  { event: "llm_done", step: 0 },
  { event: "tool_start", step: 0, tool: "echo", args: { message: "hi\nthere" } },
  { event: "tool_done", step: 0, tool: "echo", status: "ok", preview: "Echo: hi there", retryable: false, ms: 12 },
  { event: "tool_done", step: 0, tool: "write_file", status: "denied", preview: "declined by the user", retryable: false, ms: 0 },
  { event: "llm_start", step: 1 },
  { event: "llm_chunk", step: 1, delta: "Done" },
  { event: "llm_chunk", step: 1, delta: "!" },
  { event: "usage", step: 1, input_tokens: 120, output_tokens: 2 },
  { event: "llm_done", step: 1 },
  { event: "final", step: 1, response: "Done!" },
];

describe("TurnPrinter: AgentEvents as terminal text", () => {
  it("one stream (an interactive terminal): thinking, text as it comes, compact tool lines, plain without colour", async () => {
    const out = sink();
    const printer = new TurnPrinter({ answers: out.writer, ui: out.writer, style: createStyle(false), showThinking: true });
    for (const event of TOOL_TURN) printer.print(event);
    printer.finish();
    await flush();
    assert.equal(
      out.text(),
      [
        "thinking: let me check",
        "Checking.",
        '[tool] echo {"message":"hi\\nthere"} -> ok 12ms | Echo: hi there',
        "[tool] write_file -> denied | declined by the user",
        "Done!",
        "",
      ].join("\n"),
    );
    assert.equal(printer.usage.describe().replace(/ · \d+ms.*$/, ""), "in 220 (40 cached) · out 12 · 2 steps");
  });

  it("two streams (a script): stdout gets only the answers, one newline-terminated block per turn; the rest goes to the other stream", async () => {
    const answers = sink();
    const ui = sink();
    const printer = new TurnPrinter({ answers: answers.writer, ui: ui.writer, style: createStyle(false), showThinking: true });
    for (const event of TOOL_TURN) printer.print(event);
    printer.finish();
    await flush();
    assert.equal(answers.text(), "Checking.\nDone!\n");
    assert.equal(ui.text(), ["thinking: let me check", '[tool] echo {"message":"hi\\nthere"} -> ok 12ms | Echo: hi there', "[tool] write_file -> denied | declined by the user", ""].join("\n"));
  });

  it("--no-thinking hides thinking; an empty answer is still one line on its own stream", async () => {
    const answers = sink();
    const ui = sink();
    const printer = new TurnPrinter({ answers: answers.writer, ui: ui.writer, style: createStyle(false), showThinking: false });
    for (const event of [
      { event: "llm_start", step: 0 },
      { event: "thinking_chunk", step: 0, delta: "secret" },
      { event: "llm_done", step: 0 },
      { event: "final", step: 0, response: "" },
    ] as AgentEvent[]) printer.print(event);
    printer.finish();
    await flush();
    assert.equal(answers.text(), "\n");
    assert.equal(ui.text(), "");
  });

  it("a final answer that never streamed is printed whole; loop_abort says why in words", async () => {
    const out = sink();
    const printer = new TurnPrinter({ answers: out.writer, ui: out.writer, style: createStyle(false), showThinking: true });
    for (const event of [
      { event: "llm_start", step: 0 },
      { event: "llm_done", step: 0 },
      { event: "final", step: 0, response: "Whole answer" },
      { event: "loop_abort", step: 0, reason: "max_steps" },
    ] as AgentEvent[]) printer.print(event);
    printer.finish();
    await flush();
    assert.equal(out.text(), "Whole answer\nstopped: the turn reached app.max_steps\n");
  });

  it("with colour, thinking is dimmed and the tool line is styled; the answer text itself never is", async () => {
    const out = sink(true);
    const printer = new TurnPrinter({ answers: out.writer, ui: out.writer, style: createStyle(true), showThinking: true });
    for (const event of TOOL_TURN.slice(0, 6)) printer.print(event);
    printer.finish();
    await flush();
    assert.equal(out.text(), "\x1b[2mthinking: \x1b[22m\x1b[2mlet me \x1b[22m\x1b[2mcheck\x1b[22m\nChecking.\n");
  });

  it("prompt_progress: a terminal gets 'reading the prompt N %' redrawn in place and erased before the answer; a pipe gets nothing", async () => {
    const reading = (processed: number): AgentEvent => ({ event: "prompt_progress", step: 0, processed, total: 200, cached: 0 });
    const events: AgentEvent[] = [{ event: "llm_start", step: 0 }, reading(90), reading(150), reading(200), { event: "llm_chunk", step: 0, delta: "Hi" }, { event: "llm_done", step: 0 }];
    const tty = sink(true);
    const printer = new TurnPrinter({ answers: tty.writer, ui: tty.writer, style: createStyle(false), showThinking: true });
    for (const event of events) printer.print(event);
    printer.finish();
    const answers = sink();
    const ui = sink();
    const piped = new TurnPrinter({ answers: answers.writer, ui: ui.writer, style: createStyle(false), showThinking: true });
    for (const event of events) piped.print(event);
    piped.finish();
    await flush();
    assert.equal(tty.text(), "reading the prompt 45 %\r\x1b[2Kreading the prompt 75 %\r\x1b[2Kreading the prompt 100 %\r\x1b[2KHi\n");
    assert.equal(answers.text(), "Hi\n");
    assert.equal(ui.text(), "", "no status in a pipe");
  });

  it("prompt_progress: a cancelled read leaves no status behind; a step's status never starts inside streamed text", async () => {
    const out = sink(true);
    const printer = new TurnPrinter({ answers: out.writer, ui: out.writer, style: createStyle(false), showThinking: true });
    printer.print({ event: "prompt_progress", step: 0, processed: 10, total: 100, cached: 0 });
    printer.finish();
    const second = sink(true);
    const next = new TurnPrinter({ answers: second.writer, ui: second.writer, style: createStyle(false), showThinking: true });
    next.print({ event: "llm_chunk", step: 0, delta: "Checking" });
    next.print({ event: "llm_start", step: 1 });
    next.print({ event: "prompt_progress", step: 1, processed: 10, total: 100, cached: 0 });
    next.print({ event: "llm_chunk", step: 1, delta: "Done" });
    next.finish();
    await flush();
    assert.equal(out.text(), "reading the prompt 10 %\r\x1b[2K");
    assert.equal(second.text(), "Checking\nDone\n");
  });

  it("a long argument list is cut to one line that fits the terminal", async () => {
    const out = sink(true, 60);
    const printer = new TurnPrinter({ answers: out.writer, ui: out.writer, style: createStyle(false), showThinking: true });
    printer.print({ event: "tool_start", step: 0, tool: "write_file", args: { path: "a.txt", content: "x".repeat(500) } });
    printer.print({ event: "tool_done", step: 0, tool: "write_file", status: "error", preview: "disk full", retryable: false, ms: 1500 });
    printer.finish();
    await flush();
    assert.equal(out.text(), '[tool] write_file {"path":"a.txt","content"… -> error 1.5s\n');
  });
});

describe("terminal chat parts", () => {
  it("slash commands; //text is a message; anything else is a message", () => {
    assert.deepEqual(parseChatCommand("/new"), { kind: "new" });
    assert.deepEqual(parseChatCommand("  /session  abc "), { kind: "session", id: "abc" });
    assert.deepEqual(parseChatCommand("/session"), { kind: "session" });
    assert.deepEqual(parseChatCommand("/agent coder"), { kind: "agent", name: "coder" });
    assert.deepEqual(parseChatCommand("/quit"), { kind: "exit" });
    assert.deepEqual(parseChatCommand("/frobnicate now"), { kind: "unknown", name: "frobnicate" });
    assert.deepEqual(parseChatCommand("//etc/hosts is a file"), { kind: "message", text: "/etc/hosts is a file" });
    assert.deepEqual(parseChatCommand("   "), { kind: "empty" });
    assert.deepEqual(parseChatCommand("what is 1/2?"), { kind: "message", text: "what is 1/2?" });
  });

  it("approval answers: y, a(lways), and everything else is the default no", () => {
    assert.deepEqual(["y", " YES ", "a", "Always", "", "n", "maybe"].map(parseApprovalAnswer), ["yes", "yes", "always", "always", "no", "no", "no"]);
  });

  it("colour only on a terminal, never with NO_COLOR or TERM=dumb", () => {
    assert.equal(wantsColor(true, {}), true);
    assert.equal(wantsColor(false, {}), false);
    assert.equal(wantsColor(true, { NO_COLOR: "1" }), false);
    assert.equal(wantsColor(true, { NO_COLOR: "" }), true);
    assert.equal(wantsColor(true, { TERM: "dumb" }), false);
  });

  it("oneLine folds newlines and cuts with an ellipsis", () => {
    assert.equal(oneLine({ a: "x\ny" }, 100), '{"a":"x\\ny"}');
    assert.equal(oneLine("a\n  b", 100), "a b");
    assert.equal(oneLine("abcdefghij", 5), "abcd…");
  });

  it("usage totals over turns", () => {
    let now = 0;
    const turn = new UsageTally(() => now);
    turn.observe({ event: "llm_start", step: 0 });
    now = 500;
    turn.observe({ event: "usage", step: 0, input_tokens: 10, output_tokens: 20 });
    turn.observe({ event: "llm_done", step: 0 });
    const total = new UsageTally();
    total.add(turn);
    total.add(turn);
    assert.equal(turn.describe(), "in 10 · out 20 · 1 step · 500ms · 40.0 tok/s");
    assert.equal(total.describe(), "2 turns · in 20 · out 40 · 2 steps · 1.0s · 40.0 tok/s");
  });

  it("the load bar draws in place on a terminal and is replaced by one line; nothing at all elsewhere", async () => {
    let now = 0;
    const tty = sink(true);
    const bar = new LoadProgressBar(tty.writer, createStyle(false), "default", () => now);
    bar.start();
    bar.update({ phase: "loading", progress: 0.5 });
    now = 1000;
    bar.update({ phase: "loading", progress: 1 });
    bar.finish("ready");
    await flush();
    assert.equal(tty.text(), "loading default [############------------] 50%\r\x1b[2Kloading default [########################] 100%\r\x1b[2Kdefault ready in 1.0s\n");
    const pipe = sink(false);
    const quiet = new LoadProgressBar(pipe.writer, createStyle(false), "default");
    quiet.start();
    quiet.update({ phase: "starting" });
    quiet.finish("ready");
    await flush();
    assert.equal(pipe.text(), "");
  });
});

describe("ChatApprovals", () => {
  const request = { tool: "echo", args: { message: "hi" }, server: "everything", step: 0, call_id: "c1" };

  function input(answers: Array<string | null>, interactive = true): ChatInput & { asked: string[] } {
    const asked: string[] = [];
    return {
      interactive,
      asked,
      read: () => Promise.resolve({ kind: "eof" }),
      interruptRead: () => undefined,
      watchTurn: () => () => undefined,
      ask: (question) => {
        asked.push(question);
        return Promise.resolve(answers.shift() ?? null);
      },
      close: () => undefined,
    };
  }

  it("asks Run <tool> <args>? [y/N/a(lways)]; always is remembered until forget()", async () => {
    const terminal = input(["n", "a", "y"]);
    const ui = sink();
    const approvals = new ChatApprovals(terminal, ui.writer, createStyle(false));
    const signal = new AbortController().signal;
    assert.equal(await approvals.ask(request, signal), "decline");
    assert.equal(await approvals.ask(request, signal), "approve");
    assert.equal(await approvals.ask(request, signal), "approve");
    assert.equal(terminal.asked.length, 2, "the answer 'always' is not asked again");
    assert.equal(terminal.asked[0], 'Run echo {"message":"hi"}? [y/N/a(lways)] ');
    approvals.forget();
    assert.equal(await approvals.ask(request, signal), "approve");
    assert.equal(terminal.asked.length, 3);
  });

  it("no terminal: declined, with the reason and the way out on the status stream", async () => {
    const piped = input([], false);
    const ui = sink();
    const approvals = new ChatApprovals(piped, ui.writer, createStyle(false));
    assert.equal(await approvals.ask(request, new AbortController().signal), "decline");
    await flush();
    assert.equal(piped.asked.length, 0);
    assert.equal(ui.text(), "declined echo: it needs approval, and with stdin not a terminal nobody can be asked (to allow it in scripts, take it out of mcp.servers.everything.requires_approval)\n");
  });
});
