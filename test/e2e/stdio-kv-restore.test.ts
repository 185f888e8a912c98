// A conversation's KV state survives the process and eviction (built CLI, serve-stdio, embedded
// engine, the demo GGUF): saved under <data_dir>/kv-cache/<model> when the process shuts down or
// another session takes the sequence, restored on the session's next turn, which then reports the
// restored prompt as `cached_input_tokens`. A corrupt saved state is ignored, never trusted.
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";

let demo = "";
before(async () => {
  demo = await ensureFixture("demo");
});

async function setup(parallel: number): Promise<{ dir: string; configPath: string; kvDir: string }> {
  const { dir, configPath } = await tempConfig(configYaml({ llama: { models: { default: localModel(demo, { parallel }) } }, agents: { assistant: { temperature: 0 } } }));
  return { dir, configPath, kvDir: path.join(dir, "data", "kv-cache", "default") };
}

const serve = (configPath: string, dir: string, env: Record<string, string> = {}): CliProcess => new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env });

/** One chat turn: its result must be the demo sentence; returns its usage event. */
async function turn(proc: CliProcess, id: string, session: string, input: string): Promise<WireMessage> {
  const reply = await proc.request({ id, method: "chat", params: { session_id: session, user_id: `user-${session}`, input } }, 60_000);
  assert.equal((reply.result as { response?: string } | undefined)?.response, DEMO_SENTENCE, JSON.stringify(reply));
  const usage = proc.messages.find((m) => m.id === id && m.event === "usage");
  assert.ok(usage, `no usage event for ${id}`);
  return usage;
}

const cachedOf = (usage: WireMessage): number => Number(usage.cached_input_tokens ?? 0);

async function stop(proc: CliProcess, how: "shutdown" | "SIGTERM"): Promise<void> {
  if (how === "shutdown") proc.send({ id: "bye", method: "shutdown" });
  else proc.kill("SIGTERM");
  assert.equal((await proc.exited).code, 0, proc.stderr.slice(-2000));
  assert.deepEqual(protocolViolations(proc), []);
}

describe("KV state across restarts and eviction (built CLI, embedded engine)", () => {
  for (const how of ["shutdown", "SIGTERM"] as const) {
    it(`after ${how}, a new process restores the session: its next turn reports the previous prompt as cached`, async () => {
      const { dir, configPath, kvDir } = await setup(2);
      const first = serve(configPath, dir);
      const before = await turn(first, "a1", "alpha", "Tell me about apples");
      await stop(first, how);
      const files = await readdir(kvDir);
      assert.equal(files.filter((file) => file.endsWith(".state")).length, 1, files.join(", "));

      const second = serve(configPath, dir);
      const after = await turn(second, "a2", "alpha", "And pears?");
      assert.ok(cachedOf(after) >= Number(before.input_tokens), `cached ${cachedOf(after)}; the first turn's prompt was ${String(before.input_tokens)} tokens`);
      assert.ok(cachedOf(after) < Number(after.input_tokens), "the new input is evaluated");
      // A session that was never saved starts cold.
      const other = await turn(second, "b1", "beta", "Tell me about boats");
      assert.equal(cachedOf(other), 0);
      await stop(second, "shutdown");
    });
  }

  it("a corrupt saved state is ignored with a debug log: the turn is evaluated cold and still correct", async () => {
    const { dir, configPath, kvDir } = await setup(2);
    const first = serve(configPath, dir);
    await turn(first, "a1", "alpha", "Tell me about apples");
    await stop(first, "shutdown");
    const state = path.join(kvDir, (await readdir(kvDir)).find((file) => file.endsWith(".state"))!);
    const bytes = await readFile(state);
    for (let at = bytes.length >> 1; at < (bytes.length >> 1) + 256 && at < bytes.length; at++) bytes[at] = (bytes[at] ?? 0) ^ 0x5a;
    await writeFile(state, bytes);

    const second = serve(configPath, dir, { LOCAL_AI_LOG_LEVEL: "debug" });
    const after = await turn(second, "a2", "alpha", "And pears?");
    assert.equal(cachedOf(after), 0);
    await stop(second, "shutdown");
    const ignored = second.stderr.split("\n").filter((line) => line.includes('"kv state ignored"'));
    assert.equal(ignored.length, 1, second.stderr.slice(-3000));
    assert.match(ignored[0]!, /"level":20/);
    assert.match(ignored[0]!, /state file does not match its meta/);
  });

  it("parallel 1, two sessions taking turns: each evicted conversation is saved and restored on its next turn", async () => {
    const { dir, configPath, kvDir } = await setup(1);
    const proc = serve(configPath, dir);
    const a1 = await turn(proc, "a1", "alpha", "Tell me about apples");
    const b1 = await turn(proc, "b1", "beta", "Tell me about boats");
    const a2 = await turn(proc, "a2", "alpha", "And pears?");
    const b2 = await turn(proc, "b2", "beta", "And ships?");
    const a3 = await turn(proc, "a3", "alpha", "And plums?");
    for (const [later, earlier] of [[a2, a1], [b2, b1], [a3, a2]] as const) {
      assert.ok(cachedOf(later) >= Number(earlier.input_tokens), `${String(later.id)}: cached ${cachedOf(later)}; ${String(earlier.id)}'s prompt was ${String(earlier.input_tokens)}`);
    }
    await stop(proc, "shutdown");
    assert.equal((await readdir(kvDir)).filter((file) => file.endsWith(".state")).length, 2);
  });
});
