// `local-ai chat` with a long prompt (built CLI, embedded engine, a bench-shaped model with a 32 k
// context; the agent's system prompt makes the prompt long): a terminal shows "reading the prompt
// N %" on a status line while the prompt is read, erased before the answer; a pipe gets only the
// answer.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { PtyCli } from "../helpers/pty-cli.js";
import { runCli } from "../helpers/run-cli.js";
import { tempConfig } from "../helpers/temp-config.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { LONG_PROMPT_SHAPE, longPromptText } from "../helpers/long-prompt.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

let model = "";
before(async () => {
  model = await ensureFixture("bench", { shape: LONG_PROMPT_SHAPE });
});

async function config(): Promise<{ dir: string; configPath: string }> {
  const assistant = { temperature: 0, max_tokens: 4, memory: false, system_prompt: longPromptText(3000, 3) };
  return tempConfig(configYaml({ llama: { models: { default: localModel(model, { ctx_size: 32768, threads: 1, parallel: 1 }) } }, agents: { assistant } }));
}

const ERASE = "\r\x1b[2K";
/** Colour codes (the status line is dimmed), one or more in a row. */
const SGR = String.raw`(?:\x1b\[[0-9;]*m)*`;
/** A status as drawn: after the first, the line is erased before it. */
const STATUS = new RegExp(String.raw`(\r\x1b\[2K)?${SGR}reading the prompt (\d+) %`, "g");
/** Control sequences (CSI) and line controls, the pieces screenLines plays. */
const CONTROLS = new RegExp(String.raw`(\x1b\[[0-9;]*[A-Za-z]|[\r\n])`);
const COLOUR = new RegExp(String.raw`^\x1b\[[0-9;]*m$`);
const TO_COLUMN = new RegExp(String.raw`^\x1b\[\d*G$`);
const CONTROL_CHAR = new RegExp(String.raw`[\x00-\x1f]`);
const WARNING = "warning: the answer was cut at max_tokens";

/**
 * The lines a terminal shows for `raw` (one turn of the chat's output, from the echo of the typed
 * line after `prompt` to the next prompt), as far as the chat and readline draw them: "\r" and
 * "\x1b[nG" move to a column, "\x1b[2K" erases the line, "\x1b[0J" the rest of it, "\n" starts a
 * new line (the pty's onlcr adds "\r"), text overwrites; colours are dropped. Anything else fails.
 */
function screenLines(prompt: string, raw: string): string[] {
  const lines = [prompt];
  let column = prompt.length;
  for (const part of raw.split(CONTROLS)) {
    const line = lines.length - 1;
    if (part === "") continue;
    else if (part === "\n") {
      lines.push("");
      column = 0;
    } else if (part === "\r") column = 0;
    else if (COLOUR.test(part)) continue;
    else if (TO_COLUMN.test(part)) column = Math.max(0, Number(part.slice(2, -1) || "1") - 1);
    else if (part === "\x1b[2K") lines[line] = "";
    else if (part === "\x1b[0J") lines[line] = lines[line]!.slice(0, column);
    else {
      assert.doesNotMatch(part, CONTROL_CHAR, `an unexpected control sequence ${JSON.stringify(part)}`);
      const text = lines[line]!.padEnd(column);
      lines[line] = text.slice(0, column) + part + text.slice(column + part.length);
      column += part.length;
    }
  }
  return lines;
}

describe("local-ai chat: a long prompt", () => {
  it("a terminal shows 'reading the prompt N %' while the prompt is read, erased before the answer", async () => {
    const { dir, configPath } = await config();
    const chat = new PtyCli(["chat", "--config", configPath, "--session", "long"], { cwd: dir });
    let at = (await chat.waitFor(/session long[^]*\n> $/)).end;
    const rawFrom = chat.output.length;
    chat.type("hi\r");
    at = (await chat.waitFor(/reading the prompt \d+ %/, at, 120_000)).end;
    await chat.waitFor(new RegExp(`\\n${WARNING}\\n> $`), at, 120_000);
    const raw = chat.output.slice(rawFrom);

    // Each status after the first is drawn over the one before (erase, then the text), percentages
    // only go up, and the last says 100 %.
    const statuses = [...raw.matchAll(STATUS)];
    assert.ok(statuses.length >= 1, JSON.stringify(raw.slice(0, 400)));
    assert.deepEqual(statuses.map((m) => m[1] !== undefined), statuses.map((_, i) => i > 0), "each redraw erases the line first");
    const percents = statuses.map((m) => Number(m[2]));
    assert.deepEqual([...percents].sort((a, b) => a - b), percents, "never goes back");
    assert.equal(percents.at(-1), 100, "the prompt is read before the answer");
    // The last status is erased before anything else is written.
    const last = statuses.at(-1)!;
    const after = raw.slice(last.index + last[0].length).replace(new RegExp(`^${SGR}`), "");
    assert.ok(after.startsWith(ERASE), `the status line stays: ${JSON.stringify(after.slice(0, 80))}`);

    // What stays on the screen: the typed line, the answer, the warning, the prompt; no status.
    const lines = screenLines("> ", raw);
    assert.equal(lines.length, 4, JSON.stringify(lines));
    assert.equal(lines[0], "> hi", "the typed line");
    assert.ok(lines[1]!.trim() !== "", "the answer");
    assert.deepEqual(lines.slice(2), [WARNING, "> "]);
    assert.ok(!lines.some((line) => line.includes("reading the prompt")), JSON.stringify(lines));

    chat.type("\x04");
    assert.equal((await chat.exited).code, 0);
  });

  it("piped: the answer on stdout, nothing about reading the prompt anywhere", async () => {
    const { dir, configPath } = await config();
    const run = await runCli(["chat", "--config", configPath], dir, { input: "hi\n", timeoutMs: 180_000 });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^[^\n]+\n$/, "one answer line");
    assert.equal(run.stderr, `${WARNING}\n`, "stderr: only the max_tokens warning");
    assert.ok(!(run.stdout + run.stderr).includes("\x1b") && !(run.stdout + run.stderr).includes("\r"), "no escape codes, no redrawn line");
  });
});
