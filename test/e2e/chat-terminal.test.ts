import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, it } from "node:test";
import type { ChatMessage } from "../../src/shared/conversation/chat-message.js";
import { agentsYaml, echoToolYaml } from "../helpers/agents-yaml.js";
import { PtyCli } from "../helpers/pty-cli.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";

/**
 * `local-ai chat` in a real pseudo-terminal on the embedded engine (generated GGUF models) with
 * the real MCP server-everything, its `echo` tool gated by requires_approval.
 */

const QUESTION = 'Run echo {"message":"hi"}? [y/N/a(lways)]';
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Select Graphic Rendition: every colour or dim/bold code. */
const SGR = new RegExp(String.raw`\x1b\[[0-9;]*m`);
const count = (text: string, part: string): number => text.split(part).length - 1;

async function historyOf(dir: string, session: string): Promise<Array<{ messages: ChatMessage[] }>> {
  const file = path.join(dir, "data", "sessions", "default_user", session, "history.jsonl");
  return (await readFile(file, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as { messages: ChatMessage[] });
}

describe("local-ai chat in a terminal", () => {
  let toolModel = "";
  let demoModel = "";
  let tinyModel = "";
  before(async () => {
    [toolModel, demoModel, tinyModel] = await Promise.all([ensureFixture("demo", { toolMode: true }), ensureFixture("demo"), ensureFixture("tiny")]);
  });

  it("asks before a gated tool runs: y runs it, n declines it, a(lways) stops asking; /new starts a session that asks again; Ctrl-C at the question cancels the turn, a second one exits", async () => {
    // No memory notes: notes from the first session would carry its "/echo" requests without their
    // tool results into the second, and the demo model counts those triggers.
    const { dir, configPath } = await tempConfig(echoToolYaml(toolModel, true, { memory: false }));
    const chat = new PtyCli(["chat", "--config", configPath, "--session", "first"], { cwd: dir });
    let at = (await chat.waitFor(/session first[^]*\n> $/)).end;
    assert.ok(chat.output.includes("\x1b[2m"), "a terminal gets colour (dimmed status text)");
    // node-llama-cpp's load progress, drawn before the first prompt.
    assert.match(chat.text, /loading default \[[#-]{24}\] \d+%/);
    const turn = async (answer: string | null): Promise<string> => {
      chat.type(`please ${DEMO_TOOL_TRIGGER} hi\r`);
      if (answer !== null) {
        at = (await chat.waitFor(new RegExp(`${escape(QUESTION)} $`), at)).end;
        chat.type(`${answer}\r`);
      }
      const start = at;
      at = (await chat.waitFor(new RegExp(`${escape(DEMO_SENTENCE)}\\n> $`), at)).end;
      return chat.text.slice(start, at);
    };

    const approved = await turn("y");
    assert.match(approved, /^y\n\[tool\] echo \{"message":"hi"\} -> ok \d+(ms|\.\ds) \| Echo: hi\n/);
    const declined = await turn("n");
    assert.match(declined, /^n\n\[tool\] echo -> denied \| declined by the user\n/);
    assert.doesNotMatch(declined, /-> ok/);
    const always = await turn("a");
    assert.match(always, /-> ok/);
    const unasked = await turn(null);
    assert.match(unasked, /\[tool\] echo \{"message":"hi"\} -> ok/);
    assert.equal(count(chat.text, QUESTION), 3, "after 'always' the same tool is not asked about again");

    // What the model was told, as stored: the tool's output, then the user's refusal.
    const turns = await historyOf(dir, "first");
    assert.equal(turns.length, 4);
    const toolMessages = turns.map((entry) => entry.messages.find((message) => message.role === "tool")?.content);
    assert.match(String(toolMessages[0]), /Echo: hi/);
    assert.match(String(toolMessages[1]), /declined/);

    chat.type("/new\r");
    const created = await chat.waitFor(/new session ([0-9a-f]{8})\n> $/, at);
    at = created.end;
    const session = created.match[1] as string;
    assert.notEqual(session, "first");
    await turn("n");
    assert.equal(count(chat.text, QUESTION), 4, "a new session starts with nothing approved");
    assert.equal((await historyOf(dir, session)).length, 1);
    assert.equal((await historyOf(dir, "first")).length, 4, "the first session is left as it was");

    // Ctrl-C while the question is open cancels the turn: the tool never runs, nothing is stored.
    chat.type(`please ${DEMO_TOOL_TRIGGER} hi\r`);
    at = (await chat.waitFor(new RegExp(`${escape(QUESTION)} $`), at)).end;
    chat.type("\x03");
    const cancelled = await chat.waitFor(/\ncancelled \(\/resume continues the turn; a new message starts over\)\n> $/, at);
    assert.doesNotMatch(chat.text.slice(at, cancelled.end), /\[tool\]/);
    assert.equal((await historyOf(dir, session)).length, 1);
    // That Ctrl-C was the first: one more at the prompt leaves.
    chat.type("\x03");
    assert.equal((await chat.exited).code, 0);
    assert.doesNotMatch(chat.text.slice(cancelled.end), /Ctrl-C again/);
  });

  it("streams text as it comes; Ctrl-C cancels the turn and keeps it resumable; /resume continues it; /agent switches; Ctrl-C at the prompt says how to leave, Ctrl-D leaves; NO_COLOR is plain", async () => {
    const { dir, configPath } = await tempConfig(agentsYaml(demoModel, tinyModel));
    // `talker` (the tiny random model, max_tokens 3000) keeps talking until it is stopped.
    const chat = new PtyCli(["chat", "--config", configPath, "--agent", "talker", "--session", "long"], { cwd: dir, env: { NO_COLOR: "1" } });
    let at = (await chat.waitFor(/agent talker \(model tiny\) · session long[^]*\n> $/)).end;
    chat.type("hello\r");
    // Text on the screen while the turn still runs (no prompt has come back): it streams.
    at = (await chat.waitFor(/^hello\n[^]{20}/, at)).end;
    chat.type("\x03");
    at = (await chat.waitFor(/\ncancelled \(\/resume continues the turn; a new message starts over\)\n> $/, at)).end;
    const sessionDir = path.join(dir, "data", "sessions", "default_user", "long");
    assert.equal(existsSync(path.join(sessionDir, "checkpoint.json")), true, "the cancelled turn stays resumable");
    assert.equal(existsSync(path.join(sessionDir, "history.jsonl")), false, "a cancelled turn is not history");

    chat.type("/resume\r");
    at = (await chat.waitFor(/^\/resume\n[^]{20}/, at)).end;
    chat.type("\x03");
    at = (await chat.waitFor(/\ncancelled[^\n]*\n> $/, at)).end;

    chat.type("/agent\r");
    at = (await chat.waitFor(/^\/agent\n {2}assistant \(model default\)\n\* talker \(model tiny\)\n> $/, at)).end;
    chat.type("/agent assistant\r");
    at = (await chat.waitFor(/agent assistant \(model default\)\n[^]*\n> $/, at)).end;
    chat.type("Hello\r");
    const answered = await chat.waitFor(new RegExp(`^Hello\\n${escape(DEMO_SENTENCE)}\\n> $`), at);
    at = answered.end;
    // The new message discarded the cancelled turn, as the cancel line said: no warning repeats it.
    assert.doesNotMatch(chat.text, /warning: discarded/);

    chat.type("\x03");
    at = (await chat.waitFor(/^\^C\n\(Ctrl-C again or Ctrl-D to exit\)\n> $/, at)).end;
    chat.type("\x04");
    assert.equal((await chat.exited).code, 0);
    assert.equal(chat.text.slice(at), "\n", "Ctrl-D leaves the terminal on a new line");
    assert.doesNotMatch(chat.output, SGR, "NO_COLOR: no colour codes at all");
  });
});
