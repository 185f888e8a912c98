// A long prompt through the built CLI (serve-stdio v1) on the llama-server engine, a bench-shaped
// model with a 32 k context: llama-server's prompt_progress chunks become prompt_progress events; a
// cancel mid-prompt ends the chat `cancelled` and llama-server stops reading (its CPU idles right
// after); the retry of the same conversation lands on the slot that holds what was read.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { tempConfig } from "../helpers/temp-config.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { freePort } from "../helpers/free-port.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { processesOnPort } from "../helpers/llama-server-procs.js";
import { readCpuSeconds } from "../helpers/proc-stats.js";
import { LONG_PROMPT_SHAPE, longPromptText } from "../helpers/long-prompt.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

let model = "";
before(async () => {
  model = await ensureFixture("bench", { shape: LONG_PROMPT_SHAPE });
});

const progressOf = (proc: CliProcess, id: string): WireMessage[] => proc.messages.filter((m) => m.id === id && m.event === "prompt_progress");

describe("long prompts over stdio (built CLI, llama-server engine)", () => {
  it("cancel mid-prompt: cancelled once llama-server stops reading, the retry reuses the slot's partial prompt", async (t) => {
    const binary = findLlamaServerBinary();
    if (binary === null) {
      process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
      t.skip("llama-server not built: run npm run build:llama-server");
      return;
    }
    const port = await freePort();
    const { dir, configPath } = await tempConfig(
      configYaml({
        llama: { binary, models: { default: localModel(model, { engine: "llama-server", port, ctx_size: 32768, threads: 1, parallel: 1 }) } },
        agents: { assistant: { temperature: 0, max_tokens: 4 } },
      }),
    );
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const input = longPromptText(3500, 3);
    proc.send({ id: "c1", method: "chat", params: { session_id: "s1", input } });
    // Mid-prompt, a batch (512 tokens) read: a progress event from llama-server's prompt_progress chunks that is not the last.
    const seen = await proc.waitFor((m) => m.id === "c1" && m.event === "prompt_progress" && Number(m.processed) >= 512 && Number(m.processed) < Number(m.total), 180_000);
    const [server] = (await processesOnPort(port)).filter((entry) => !entry.watchdog);
    assert.ok(server, "the llama-server child runs");
    const cancelSent = performance.now();
    proc.send({ id: "x1", method: "cancel", params: { request_id: "c1" } });
    const ended = await proc.response("c1", 30_000);
    const endedMs = performance.now() - cancelSent;
    assert.equal(ended.type, "error");
    assert.equal(ended.code, "cancelled", JSON.stringify(ended));
    // Once llama-server has stopped: the rest of one 512-token batch (-b 512), two at worst, which a busy 2-core machine reads in seconds.
    assert.ok(endedMs < 15_000, `the chat ended ${endedMs.toFixed(0)} ms after the cancel; ${proc.stderr.slice(-2000)}`);
    assert.ok(!proc.messages.some((m) => m.id === "c1" && m.event === "llm_chunk"), "no answer text after a cancel mid-prompt");
    // llama-server stopped the task: no CPU for the cancelled prompt over the next 3 s.
    const cpuBefore = readCpuSeconds(server.pid);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const cpu = readCpuSeconds(server.pid) - cpuBefore;
    assert.ok(cpu < 0.3, `llama-server used ${cpu.toFixed(2)} s of CPU in the 3 s after the cancel (cancel answered after ${endedMs.toFixed(0)} ms)`);
    const readBefore = Math.max(...progressOf(proc, "c1").map((m) => Number(m.processed)));
    assert.ok(readBefore >= Number(seen.processed));

    // The retry (the same conversation) goes to the slot that holds what was read, on the same server.
    const retry = await proc.request({ id: "c2", method: "chat", params: { session_id: "s1", input } }, 180_000);
    assert.equal(retry.type, "result", JSON.stringify(retry));
    const [after] = (await processesOnPort(port)).filter((entry) => !entry.watchdog);
    assert.equal(after?.pid, server.pid, "llama-server was not restarted");
    const usage = proc.messages.find((m) => m.id === "c2" && m.event === "usage");
    assert.ok(usage);
    assert.ok(Number(usage.cached_input_tokens) >= readBefore, `the retry reused ${String(usage.cached_input_tokens)} tokens; ${readBefore} had been read before the cancel`);
    process.stderr.write(`llama-server cancel mid-prompt: cancelled after ${endedMs.toFixed(0)} ms, server CPU ${cpu.toFixed(2)} s in the 3 s after, read ${readBefore}/${String(seen.total)} before, retry cached ${String(usage.cached_input_tokens)}\n`);
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });
});
