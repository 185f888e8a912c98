// A long prompt through `serve-stdio --protocol acp` (built CLI, embedded engine, a bench-shaped
// model with a 32 k context), driven by the ACP SDK's client side: the editor sees how far the
// prompt has been read as a one-entry `plan` ("Reading the prompt: 45 % (...)"), completed before
// the answer's first chunk, and `session/cancel` mid-prompt stops the reading at once.
import assert from "node:assert/strict";
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { methods, type PlanEntry, type SessionUpdate } from "@agentclientprotocol/sdk";
import { AcpEditor } from "../helpers/acp-editor.js";
import { tempConfig } from "../helpers/temp-config.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { readCpuSeconds } from "../helpers/proc-stats.js";
import { LONG_PROMPT_SHAPE, longPromptText } from "../helpers/long-prompt.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

let model = "";
before(async () => {
  model = await ensureFixture("bench", { shape: LONG_PROMPT_SHAPE });
});

async function open(): Promise<{ editor: AcpEditor; sessionId: string }> {
  const { dir, configPath } = await tempConfig(
    configYaml({ llama: { models: { default: localModel(model, { ctx_size: 32768, threads: 1, parallel: 1 }) } }, agents: { assistant: { temperature: 0, max_tokens: 4 } } }),
  );
  const editor = new AcpEditor(["--config", configPath], { cwd: dir });
  await editor.initialize({});
  const ws = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));
  const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
  return { editor, sessionId };
}

const CACHED = /; ([\d,]+) cached\)$/;
const READING = /^Reading the prompt: (\d+) % \(([\d,]+) of ([\d,]+) tokens(?:; ([\d,]+) cached)?\)$/;

interface Reading {
  /** Index of the update among the session's updates. */
  at: number;
  entry: PlanEntry;
  percent: number;
  processed: number;
  total: number;
}

/** The session's "Reading the prompt" plans (the model's load is a plan too: left out). */
function readings(updates: SessionUpdate[]): Reading[] {
  const figure = (text: string): number => Number(text.replaceAll(",", ""));
  return updates.flatMap((update, at) => {
    if (update.sessionUpdate !== "plan" || !update.entries.some((e) => e.content.startsWith("Reading the prompt"))) return [];
    assert.equal(update.entries.length, 1, "a one-entry plan");
    const entry = update.entries[0]!;
    const match = READING.exec(entry.content);
    assert.ok(match, `the plan's text: ${entry.content}`);
    return [{ at, entry, percent: figure(match[1]!), processed: figure(match[2]!), total: figure(match[3]!) }];
  });
}

describe("long prompts over ACP (built CLI, embedded engine)", () => {
  it("the editor sees 'Reading the prompt' plans, the last one before the first chunk completed at 100 %", async () => {
    const { editor, sessionId } = await open();
    const response = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: longPromptText(3000, 1) }] });
    assert.equal(response.stopReason, "max_tokens", "4 answer tokens at most");
    const updates = editor.updates(sessionId);
    const seen = readings(updates);
    assert.ok(seen.length >= 1, `no 'Reading the prompt' plan: ${JSON.stringify(updates.filter((u) => u.sessionUpdate === "plan"))}; ${editor.stderr.slice(-2000)}`);
    const total = seen[0]!.total;
    for (const [index, reading] of seen.entries()) {
      assert.equal(reading.total, total, "the same prompt throughout");
      assert.equal(reading.percent, Math.floor((reading.processed / reading.total) * 100), reading.entry.content);
      assert.equal(reading.entry.priority, "high");
      assert.equal(reading.entry.status, reading.processed === reading.total ? "completed" : "in_progress", reading.entry.content);
      if (index > 0) assert.ok(reading.processed >= seen[index - 1]!.processed, "processed never decreases");
    }
    const firstChunk = updates.findIndex((u) => u.sessionUpdate === "agent_message_chunk");
    assert.ok(firstChunk >= 0, "the model answered");
    const last = seen.at(-1)!;
    assert.ok(last.at < firstChunk, "the prompt is read before the answer");
    assert.ok(!seen.some((r) => r.at > firstChunk), "no reading plan after the answer started");
    assert.deepEqual(last.entry, { content: `Reading the prompt: 100 % (${total.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} tokens)`, priority: "high", status: "completed" });
    // The prompt read is what the usage reports (4 answer tokens at most on top).
    const usage = updates.find((u) => u.sessionUpdate === "usage_update");
    assert.ok(usage?.sessionUpdate === "usage_update");
    assert.ok(usage.used >= total && usage.used <= total + 4, `used ${usage.used}, prompt ${total}`);
    assert.equal((await editor.close()).code, 0, editor.stderr);
    assert.deepEqual(editor.stdoutViolations(), []);
  });

  it("session/cancel mid-prompt: the prompt answers `cancelled` within a second, the process idles, the same prompt again reuses what was read", async () => {
    const { editor, sessionId } = await open();
    const text = longPromptText(4000, 2);
    const answer = editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    // Mid-prompt: a reading plan that is not the last.
    await editor.waitFor(() => readings(editor.updates(sessionId)).some((r) => r.processed > 0 && r.processed < r.total), "a reading plan mid-prompt", 60_000);
    const cancelSent = performance.now();
    await editor.agent.notify(methods.agent.session.cancel, { sessionId });
    const response = await answer;
    const endedMs = performance.now() - cancelSent;
    assert.equal(response.stopReason, "cancelled");
    assert.ok(endedMs < 1000, `the prompt answered ${endedMs.toFixed(0)} ms after the cancel`);
    assert.ok(!editor.updates(sessionId).some((u) => u.sessionUpdate === "agent_message_chunk"), "no answer text after a cancel mid-prompt");
    // No work goes on for the cancelled prompt: CPU over the next 3 s.
    const pid = editor.child.pid!;
    const cpuBefore = readCpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const cpu = readCpuSeconds(pid) - cpuBefore;
    assert.ok(cpu < 0.3, `the process used ${cpu.toFixed(2)} s of CPU in the 3 s after the cancel`);
    process.stderr.write(`# ACP cancel mid-prompt -> cancelled: ${endedMs.toFixed(0)} ms; CPU in the next 3 s: ${cpu.toFixed(2)} s\n`);
    const readBefore = Math.max(...readings(editor.updates(sessionId)).map((r) => r.processed));

    // The same prompt again: what was read before the cancel is not read again ("; N cached").
    const from = editor.updates(sessionId).length;
    const retry = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    assert.equal(retry.stopReason, "max_tokens");
    const first = readings(editor.updates(sessionId).slice(from))[0];
    assert.ok(first, "the rest of the prompt takes over a second: its reading is shown");
    const cached = CACHED.exec(first.entry.content);
    assert.ok(cached && Number(cached[1]!.replaceAll(",", "")) >= readBefore, `${first.entry.content}; ${readBefore} tokens had been read before the cancel`);
    assert.equal((await editor.close()).code, 0, editor.stderr);
    assert.deepEqual(editor.stdoutViolations(), []);
  });
});
