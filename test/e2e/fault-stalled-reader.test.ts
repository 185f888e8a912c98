import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { procMemory } from "../helpers/proc-memory.js";
import { tempConfig } from "../helpers/temp-config.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

/**
 * A host that stops reading stdout in the middle of a long chat (serve-stdio, default stdio
 * settings, the tiny model talking for 600 tokens, 3,000 under stress). The request id is 64 KiB, so every
 * event line is at least that long and a few of them fill the pipe: from then on the writer waits
 * for `drain`, the text of the turn is merged while it waits (stdio.coalesce_ms and the writer's
 * backlog), and the turn finishes behind the stalled reader. Checked once reading resumes: every
 * event of the chat arrives in order, the text is exactly the turn's text, the result is there,
 * nothing was dropped, and the process's resident memory grew by a bounded amount meanwhile.
 * `npm test` stalls 4 s, `npm run test:stress` (LOCAL_AI_STRESS=1) 60 s.
 */
const STRESS = process.env.LOCAL_AI_STRESS === "1";
const STALL_MS = Number(process.env.LOCAL_AI_STALL_MS ?? (STRESS ? 60_000 : 4_000));
const ID_BYTES = 64 * 1024;
/** Generous: only unbounded buffering (the whole stream kept per token) would cross it. */
const RSS_GROWTH_BOUND_MIB = 64;
const SAMPLE_MS = 250;
const INPUT = "Tell me everything you know";
/** The talker's reply length: long enough to outlast several pipe-fulls of 64 KiB lines. */
const MAX_TOKENS = STRESS ? 3000 : 600;

let demoPath = "";
let tinyPath = "";

before(async () => {
  [demoPath, tinyPath] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
});

const eventsOf = (proc: CliProcess, id: string): WireMessage[] => proc.messages.filter((m) => m.id === id && m.type === "event");
const textOf = (events: WireMessage[]): string => events.filter((e) => e.event === "llm_chunk").map((e) => String(e.delta)).join("");
/** Event names with each run of llm_chunk collapsed to one. */
const shapeOf = (events: WireMessage[]): string[] => events.map((e) => String(e.event)).filter((n, i, all) => !(n === "llm_chunk" && all[i - 1] === "llm_chunk"));

async function historyText(dir: string, user: string): Promise<string | null> {
  const file = path.join(dir, "data", "sessions", user, "s", "history.jsonl");
  const raw = await readFile(file, "utf8").catch(() => null);
  if (raw === null) return null;
  const entry = JSON.parse(raw.trim().split("\n").at(-1) ?? "") as { messages: Array<{ role: string; content: string }> };
  return entry.messages.at(-1)?.content ?? null;
}

describe(`serve-stdio with a reader stalled mid-stream (${STALL_MS} ms, built CLI)`, () => {
  it("every event arrives in order once reading resumes, the text is whole, memory stays bounded", { timeout: STALL_MS + 300_000 }, async (t) => {
    const yaml = agentsYaml(demoPath, tinyPath);
    assert.ok(yaml.includes("max_tokens: 3000"));
    const { dir, configPath } = await tempConfig(yaml.replace("max_tokens: 3000", `max_tokens: ${MAX_TOKENS}`));
    // Debug logs: the writer says STDIO_WRITER_DROP for a dropped event and its counts at exit.
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "debug" } });
    const pid = proc.child.pid ?? 0;

    // The reference: the same turn (same input, a fresh session of another user, so no memory of
    // the other turn) with a reader that keeps up. Greedy decoding makes it the expected text.
    const ref = await proc.request({ id: "ref", method: "chat", params: { user_id: "ref", session_id: "s", agent: "talker", input: INPUT } }, 240_000);
    assert.equal(ref.type, "result", JSON.stringify(ref).slice(0, 500));
    const expected = (ref.result as { response: string }).response;
    const refEvents = eventsOf(proc, "ref");
    assert.equal(textOf(refEvents), expected);
    assert.ok(expected.length > MAX_TOKENS, `a long reply (${expected.length} characters)`);

    const base = await procMemory(pid);
    assert.ok(base !== null, "/proc/<pid>/status is readable");
    const id = `stalled-${"x".repeat(ID_BYTES)}`;
    proc.send({ id, method: "chat", params: { user_id: "stall", session_id: "s", agent: "talker", input: INPUT } });
    await proc.waitFor((m) => m.id === id && m.event === "llm_chunk", 120_000);
    proc.child.stdout.pause();
    const seenBefore = proc.messages.length;
    const bytesBefore = proc.stdout.length;

    // The stall: STALL_MS, and at least until the turn is on disk (so it ends behind the stalled
    // reader). Resident memory is sampled meanwhile.
    const stallStart = Date.now();
    let peakRss = base.rssMiB;
    let finishedAtMs: number | null = null;
    while (Date.now() - stallStart < STALL_MS || finishedAtMs === null) {
      await sleep(SAMPLE_MS);
      const now = await procMemory(pid);
      assert.ok(now !== null, `the CLI is alive during the stall; stderr: ${proc.stderr.slice(-2000)}`);
      peakRss = Math.max(peakRss, now.rssMiB);
      if (finishedAtMs === null && (await historyText(dir, "stall")) !== null) finishedAtMs = Date.now() - stallStart;
      assert.ok(Date.now() - stallStart < STALL_MS + 240_000, "the turn finishes behind a stalled reader");
    }
    assert.equal(proc.messages.length, seenBefore, "nothing is read while the reader is stalled");
    const stallMs = Date.now() - stallStart;

    proc.child.stdout.resume();
    const reply = await proc.response(id, 120_000);
    const after = await procMemory(pid);
    peakRss = Math.max(peakRss, after?.rssMiB ?? 0);
    const bytesAfterResume = proc.stdout.length - bytesBefore;

    assert.equal(reply.type, "result", JSON.stringify(reply).slice(0, 500));
    const response = (reply.result as { response: string }).response;
    const events = eventsOf(proc, id);
    assert.equal(textOf(events), response, "the deltas add up to the response");
    assert.equal(response, expected, "the turn's text is the reference text");
    assert.equal(await historyText(dir, "stall"), expected, "and so is the saved turn");
    // The reference turn was the process's first: it also reported the model's load (model_load).
    assert.deepEqual(shapeOf(events), shapeOf(refEvents).filter((name) => name !== "model_load"), "the same events in the same order");
    assert.ok(refEvents.some((e) => e.event === "model_load" && e.state === "loaded"), "the first turn reported the load");
    assert.deepEqual(shapeOf(events), ["run_start", "memory_start", "llm_start", "llm_chunk", "usage", "llm_done", "final"]);
    const mine = proc.messages.filter((m) => m.id === id);
    assert.equal(mine.at(-1), reply, "the result comes after every event of its chat");
    // The pipe really filled: the writer waited for drain and the text was merged meanwhile, so the
    // last delta carries most of the reply (a reader that keeps up gets it in many small deltas).
    const chunks = events.filter((e) => e.event === "llm_chunk");
    const last = chunks.at(-1)?.delta;
    const lastDelta = typeof last === "string" ? last : "";
    assert.ok(lastDelta.length > response.length / 2, `the last delta holds ${lastDelta.length} of ${response.length} characters`);

    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0, proc.stderr.slice(-2000));
    assert.deepEqual(protocolViolations(proc), []);
    assert.doesNotMatch(proc.stderr, /STDIO_WRITER_DROP/, "no event was dropped");
    const closed = proc.stderr.split("\n").find((line) => line.includes('"stdio writer closed"'));
    const stats = closed === undefined ? null : (JSON.parse(closed) as { stats: { dropped: number; discarded: number } }).stats;
    assert.ok(stats !== null, "the writer logs its counts at exit");
    assert.equal(stats.dropped, 0);
    assert.equal(stats.discarded, 0);

    const growth = peakRss - base.rssMiB;
    const usage = events.find((e) => e.event === "usage");
    const figures = {
      stall_ms: stallMs,
      turn_on_disk_after_ms: finishedAtMs,
      output_tokens: usage?.output_tokens,
      reply_chars: response.length,
      llm_chunk_events: { reader_keeping_up: refEvents.filter((e) => e.event === "llm_chunk").length, stalled: chunks.length },
      bytes_before_stall: bytesBefore,
      bytes_after_resume: bytesAfterResume,
      rss_mib: { before: Math.round(base.rssMiB), peak: Math.round(peakRss), growth: Math.round(growth * 10) / 10 },
    };
    t.diagnostic(JSON.stringify(figures));
    assert.ok(growth < RSS_GROWTH_BOUND_MIB, `resident memory grew ${growth.toFixed(1)} MiB during the stall (bound ${RSS_GROWTH_BOUND_MIB})`);
    await rm(dir, { recursive: true, force: true });
  });
});
