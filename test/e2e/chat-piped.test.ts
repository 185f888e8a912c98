import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { agentsYaml, echoToolYaml } from "../helpers/agents-yaml.js";
import { CLI_PATH } from "../helpers/cli-process.js";
import { runCli, type CliRun } from "../helpers/run-cli.js";
import { chunk, scripted, sendJsonError, listingModel, startUpstream, usageChunk, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";

/** `local-ai chat` in a script: stdin and stdout are pipes, one turn per line. */

/** `local-ai chat` with piped stdin: one turn per line. */
function chat(args: readonly string[], input: string, cwd: string): Promise<CliRun> {
  return runCli(["chat", ...args], cwd, { input });
}

describe("local-ai chat with piped stdin", () => {
  it("each line is a turn, answers (only) on stdout; a gated tool is declined with the reason on stderr; slash commands work", async () => {
    const toolModel = await ensureFixture("demo", { toolMode: true });
    const { dir, configPath } = await tempConfig(echoToolYaml(toolModel));
    const run = await chat(["--config", configPath], `Hello\n/new\nplease ${DEMO_TOOL_TRIGGER} hi\n`, dir);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `${DEMO_SENTENCE}\n${DEMO_SENTENCE}\n`);
    assert.match(run.stderr, /^new session [0-9a-f]{8}$/m);
    assert.match(run.stderr, /^declined echo: it needs approval, and with stdin not a terminal nobody can be asked \(to allow it in scripts, take it out of mcp\.servers\.everything\.requires_approval\)$/m);
    assert.match(run.stderr, /^\[tool\] echo -> denied \| declined by the user$/m);
    assert.ok(!(run.stdout + run.stderr).includes("\x1b"), "no escape codes in a pipe");
  });

  it("an answer cut by the agent's max_tokens is printed and warned about (the turn outcome's length)", async () => {
    const demoModel = await ensureFixture("demo");
    const { dir, configPath } = await tempConfig(configYaml({ llama: { models: { default: localModel(demoModel) } }, agents: { assistant: { temperature: 0, max_tokens: 3 } } }));
    const run = await chat(["--config", configPath], "Hello\n", dir);
    assert.equal(run.code, 0, run.stderr);
    const answer = run.stdout.replace(/\n$/, "");
    assert.ok(answer !== "" && answer !== DEMO_SENTENCE && DEMO_SENTENCE.startsWith(answer), answer);
    assert.match(run.stderr, /^warning: the answer was cut at max_tokens$/m);
  });

  it("a reader that goes away (| head -c 5) ends the chat quietly with 0, never a crash", async () => {
    const demoModel = await ensureFixture("demo");
    const { dir, configPath } = await tempConfig(agentsYaml(demoModel));
    const child = spawn(process.execPath, [CLI_PATH, "chat", "--config", configPath], { cwd: dir, env: { ...process.env, LOCAL_AI_LOG_LEVEL: "warn" }, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.end("Hello\n".repeat(20));
    // The first answer bytes arrive, then the reader hangs up: every later write meets EPIPE.
    await new Promise((resolve) => child.stdout.once("data", resolve));
    child.stdout.destroy();
    assert.equal(await exited, 0, stderr);
    assert.doesNotMatch(stderr, /uncaught|EPIPE/i);
  });

  it("SIGTERM mid-turn cancels the turn (kept resumable) and exits 143; SIGINT exits 130", async () => {
    const [demoModel, tinyModel] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny")]);
    const { dir, configPath } = await tempConfig(agentsYaml(demoModel, tinyModel));
    for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
      const session = signal.toLowerCase();
      // `talker` does not stop on its own: the signal always lands mid-turn.
      const child = spawn(process.execPath, [CLI_PATH, "chat", "--config", configPath, "--agent", "talker", "--session", session], { cwd: dir, env: { ...process.env, LOCAL_AI_LOG_LEVEL: "warn" }, stdio: ["pipe", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
      // `close`, not `exit`: `exit` can come before the child's last stderr bytes were read (a CI flake).
      const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
      child.stdin.end("hello\nnever asked\n");
      await new Promise((resolve) => child.stdout.once("data", resolve));
      child.kill(signal);
      assert.equal(await exited, code, stderr);
      assert.match(stderr, /^cancelled /m);
      assert.equal(existsSync(path.join(dir, "data", "sessions", "default_user", session, "checkpoint.json")), true, "the cancelled turn stays resumable");
      assert.equal(existsSync(path.join(dir, "data", "sessions", "default_user", session, "history.jsonl")), false, "no later line ran");
    }
  });

  it("without a config: one line on stderr, exit 1, nothing on stdout", async () => {
    const { dir } = await tempConfig();
    const run = await chat(["--config", "nope.yaml"], "Hello\n", dir);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /^local-ai chat: no config file at .*nope\.yaml/);
  });

  describe("on the openai engine (scripted upstream)", () => {
    let upstream: ScriptedUpstream;
    let configPath = "";
    let dir = "";
    before(async () => {
      upstream = await startUpstream(
        listingModel("up-model", (req, res, body) => {
          const messages = (body as { messages: Array<{ role: string; content: string }> }).messages;
          const last = messages.at(-1)?.content ?? "";
          if (last === "fail") return sendJsonError(res, 400, "this request fails on purpose");
          return scripted([
            chunk({ role: "assistant", content: "" }),
            chunk({ reasoning_content: "pondering " }),
            chunk({ reasoning_content: `${last}` }),
            chunk({ content: "Answer " }),
            chunk({ content: `to ${last}.` }),
            chunk({}, "stop"),
            usageChunk(12, 5),
          ])(req, res, body);
        }),
      );
      ({ dir, configPath } = await tempConfig(
        configYaml({ llama: { models: { default: openaiModel(upstream.baseUrl, "up-model") } }, agents: { assistant: { memory: false } } }),
      ));
    });
    after(async () => {
      await upstream?.close();
    });

    it("thinking and usage go to stderr, the answer to stdout; a failed turn keeps its (empty) line, says why on stderr and makes the exit code 1", async () => {
      const run = await chat(["--config", configPath, "--usage"], "one\nfail\ntwo\n", dir);
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stdout, "Answer to one.\n\nAnswer to two.\n");
      const lines = run.stderr.split("\n");
      assert.deepEqual(lines.filter((line) => line.startsWith("thinking:")), ["thinking: pondering one", "thinking: pondering two"]);
      assert.equal(lines.filter((line) => /^usage: in 12 · out 5 · 1 step · /.test(line)).length, 2);
      assert.equal(lines.filter((line) => /^error \(\w+\): .*this request fails on purpose/.test(line)).length, 1, run.stderr);
    });

    it("--no-thinking hides the thinking; the history keeps the conversation for --session", async () => {
      const first = await chat(["--config", configPath, "--no-thinking", "--session", "kept"], "one\n", dir);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.stdout, "Answer to one.\n");
      assert.doesNotMatch(first.stderr, /thinking/);
      const second = await chat(["--config", configPath, "--no-thinking", "--session", "kept"], "two\n", dir);
      assert.equal(second.stdout, "Answer to two.\n");
      const sent = upstream.requests.findLast((request) => request.url === "/v1/chat/completions")?.body as { messages: Array<{ role: string; content: string }> };
      assert.deepEqual(sent.messages.filter((message) => message.role !== "system").map((message) => `${message.role}: ${message.content}`), ["user: one", "assistant: Answer to one.", "user: two"]);
    });
  });
});
