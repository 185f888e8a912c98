// A long prompt through the built CLI (serve-stdio v1, embedded engine, a bench-shaped model with a
// 32 k context): read in chunks, it shows `prompt_progress`, stops within a chunk when cancelled
// (the process idles right after), and what was read before the cancel is reused by the retry.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { tempConfig } from "../helpers/temp-config.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { readCpuSeconds } from "../helpers/proc-stats.js";
import { LONG_PROMPT_SHAPE, longPromptText } from "../helpers/long-prompt.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

let model = "";
before(async () => {
  model = await ensureFixture("bench", { shape: LONG_PROMPT_SHAPE });
});

async function serve(): Promise<CliProcess> {
  const { dir, configPath } = await tempConfig(
    configYaml({ llama: { models: { default: localModel(model, { ctx_size: 32768, threads: 1, parallel: 1 }) } }, agents: { assistant: { temperature: 0, max_tokens: 4 } } }),
  );
  return new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
}

const progressOf = (proc: CliProcess, id: string): WireMessage[] => proc.messages.filter((m) => m.id === id && m.event === "prompt_progress");

describe("long prompts over stdio (built CLI, embedded engine)", () => {
  it("prompt_progress while the prompt is read: monotonic, the same total, processed == total before the first text", async () => {
    const proc = await serve();
    const reply = await proc.request({ id: "c1", method: "chat", params: { session_id: "p1", input: longPromptText(2000, 1) } }, 120_000);
    assert.equal(reply.type, "result", JSON.stringify(reply));
    const progress = progressOf(proc, "c1");
    assert.ok(progress.length >= 1, `no prompt_progress: ${proc.stderr.slice(-2000)}`);
    const usage = proc.messages.find((m) => m.id === "c1" && m.event === "usage");
    assert.ok(usage);
    for (const [index, event] of progress.entries()) {
      assert.deepEqual(Object.keys(event).sort(), ["cached", "event", "id", "processed", "step", "total", "type"]);
      assert.equal(event.step, 0);
      assert.equal(event.total, usage.input_tokens, "total is the step's prompt");
      assert.equal(event.cached, 0, "a new session reuses nothing");
      if (index > 0) assert.ok(Number(event.processed) >= Number(progress[index - 1]!.processed), "processed never decreases");
    }
    const last = progress.at(-1)!;
    assert.equal(last.processed, last.total, "the last progress before the answer says the prompt is read");
    const at = (m: WireMessage): number => proc.messages.indexOf(m);
    const firstText = proc.messages.find((m) => m.id === "c1" && (m.event === "llm_chunk" || m.event === "llm_done"));
    assert.ok(firstText && at(last) < at(firstText), "progress comes before the step's output");
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });

  it("cancel mid-prompt: the chat ends cancelled within a second, the process idles, the retry reuses what was read", async () => {
    const proc = await serve();
    const input = longPromptText(4000, 2);
    proc.send({ id: "c2", method: "chat", params: { session_id: "p2", input } });
    // Mid-prompt: a progress event that is not the last.
    const seen = await proc.waitFor((m) => m.id === "c2" && m.event === "prompt_progress" && Number(m.processed) > 0 && Number(m.processed) < Number(m.total), 120_000);
    const cancelSent = performance.now();
    proc.send({ id: "x2", method: "cancel", params: { request_id: "c2" } });
    const ended = await proc.response("c2", 10_000);
    const endedMs = performance.now() - cancelSent;
    assert.equal(ended.type, "error");
    assert.equal(ended.code, "cancelled", JSON.stringify(ended));
    assert.ok(endedMs < 1000, `the chat ended ${endedMs.toFixed(0)} ms after the cancel`);
    assert.ok(!proc.messages.some((m) => m.id === "c2" && m.event === "llm_chunk"), "no answer text after a cancel mid-prompt");
    // No work goes on for the cancelled prompt: CPU over the next 3 s.
    const pid = proc.child.pid!;
    const cpuBefore = readCpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const cpu = readCpuSeconds(pid) - cpuBefore;
    assert.ok(cpu < 0.3, `the process used ${cpu.toFixed(2)} s of CPU in the 3 s after the cancel`);
    const readBefore = Math.max(...progressOf(proc, "c2").map((m) => Number(m.processed)));
    assert.ok(readBefore >= Number(seen.processed));

    // The retry (the same conversation again) starts from what was read.
    const retry = await proc.request({ id: "c3", method: "chat", params: { session_id: "p2", input } }, 120_000);
    assert.equal(retry.type, "result", JSON.stringify(retry));
    const usage = proc.messages.find((m) => m.id === "c3" && m.event === "usage");
    assert.ok(usage);
    assert.ok(Number(usage.cached_input_tokens) >= readBefore, `the retry reused ${String(usage.cached_input_tokens)} tokens; ${readBefore} had been read before the cancel`);
    const firstProgress = progressOf(proc, "c3")[0];
    if (firstProgress !== undefined) assert.ok(Number(firstProgress.cached) >= readBefore);
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });
});
