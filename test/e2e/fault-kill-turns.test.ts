import assert from "node:assert/strict";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { sessionPaths } from "../../src/store/session-paths.js";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { prng } from "../helpers/random-lines.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

/**
 * kill -9 of serve-stdio at random moments of its turns (built CLI, embedded demo model, one
 * data_dir, three sessions). Each round is a new process: it first checks every session the last
 * kill interrupted, all at once (resumes the interrupted turn when one is on disk, else runs a new
 * turn), timing that warm round, then starts a turn on every session at once and SIGKILLs itself
 * at a seeded random moment within that time (so each turn is caught at another point). At
 * the end every session loads with the store's own loader (nothing left to repair, whole turns
 * only, no turn saved twice, every answered turn kept) and takes a new turn. `npm test` kills 12
 * turns (4 processes), `npm run test:stress` (LOCAL_AI_STRESS=1) 200 (67 processes). A failure
 * prints the seed: `LOCAL_AI_SEED=<seed> LOCAL_AI_KILL_TURNS=<n> node --test dist/test/e2e/fault-kill-turns.test.js`.
 */
const STRESS = process.env.LOCAL_AI_STRESS === "1";
const TURNS = Number(process.env.LOCAL_AI_KILL_TURNS ?? (STRESS ? 200 : 12));
const SEED = Number(process.env.LOCAL_AI_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SESSIONS = ["s0", "s1", "s2"];
/** One process per round, killed under one turn per session. */
const ROUNDS = Math.ceil(TURNS / SESSIONS.length);
const USER = "default_user";
const TURN_TIMEOUT_MS = 120_000;

let demoPath = "";

before(async () => {
  demoPath = await ensureFixture("demo");
});

interface Figures {
  turns: number;
  processes_killed: number;
  killed_mid_turn: number;
  killed_after_result: number;
  resumed: number;
  stale_checkpoints: number;
  new_turns_after_kill: number;
  torn_lines_repaired: number;
  warm_turn_ms: number[];
}

/** What the last round left on disk for a session, read without our code: raw files. */
async function diskState(dataDir: string, session: string): Promise<{ checkpointTrace: string | null; historyTraces: string[] }> {
  const paths = sessionPaths(dataDir, USER, session);
  const checkpoint = await readFile(paths.checkpoint, "utf8").catch(() => null);
  const history = await readFile(paths.history, "utf8").catch(() => "");
  const historyTraces: string[] = [];
  for (const line of history.split("\n")) {
    try {
      historyTraces.push((JSON.parse(line) as { trace_id: string }).trace_id);
    } catch {
      // A torn last line (a kill mid-append): the next load repairs it.
    }
  }
  return { checkpointTrace: checkpoint === null ? null : (JSON.parse(checkpoint) as { trace_id: string }).trace_id, historyTraces };
}

const resultOf = (reply: WireMessage): { response: string; trace_id: string; warnings: string[] } => {
  assert.equal(reply.type, "result", JSON.stringify(reply));
  return reply.result as { response: string; trace_id: string; warnings: string[] };
};

/**
 * Warnings a turn may carry here: a torn last line repaired (a kill mid-append), an unfinished turn
 * discarded, and (long runs) the oldest history trimmed to fit the context. Anything else fails.
 */
function checkWarnings(warnings: string[], figures: Figures): void {
  for (const warning of warnings) {
    if (/torn last line/.test(warning)) figures.torn_lines_repaired += 1;
    else if (!/oldest history messages to fit the context window/.test(warning)) assert.match(warning, /discarded the unfinished turn/);
  }
}

describe(`kill -9 of serve-stdio at random moments (${TURNS} turns, seed ${SEED})`, () => {
  it("killed between saving a finished turn and removing its checkpoint: nothing to resume, the turn is not saved twice", async () => {
    const { dir, configPath } = await tempConfig(agentsYaml(demoPath));
    const dataDir = path.join(dir, "data");
    const first = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const done = resultOf(await first.request({ id: 1, method: "chat", params: { session_id: "s", input: "first" } }, TURN_TIMEOUT_MS));
    first.send({ id: "bye", method: "shutdown" });
    assert.equal((await first.exited).code, 0);
    // What that kill leaves: the turn in the history and the checkpoint of its last step.
    const paths = sessionPaths(dataDir, USER, "s");
    const checkpoint = { version: 1, trace_id: done.trace_id, agent: "assistant", user_input: "first", messages: [{ role: "user", content: "first" }], step: 0, parse_errors: 0, status: "running", pending: null, updated_at: new Date().toISOString() };
    await writeFile(paths.checkpoint, JSON.stringify(checkpoint));

    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const refused = await proc.request({ id: 2, method: "chat", params: { session_id: "s", resume: true } }, TURN_TIMEOUT_MS);
    assert.equal(refused.code, "invalid_request", JSON.stringify(refused));
    assert.match(String(refused.message), /Nothing to resume/);
    const next = resultOf(await proc.request({ id: 3, method: "chat", params: { session_id: "s", input: "second" } }, TURN_TIMEOUT_MS));
    assert.deepEqual(next.warnings, [], "no 'discarded the unfinished turn': that turn was finished");
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    const lines = (await readFile(paths.history, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as { trace_id: string });
    assert.deepEqual(lines.map((entry) => entry.trace_id), [done.trace_id, next.trace_id]);
    assert.equal((await readdir(paths.dir)).includes("checkpoint.json"), false, "the next turn removed it");
    await rm(dir, { recursive: true, force: true });
  });

  it("every interrupted turn resumes, no session is corrupt, history holds whole turns only", { timeout: 60_000 + ROUNDS * 60_000 }, async (t) => {
    const { dir, configPath } = await tempConfig(agentsYaml(demoPath));
    const dataDir = path.join(dir, "data");
    const random = prng(SEED);
    /** Trace ids of every turn a process answered: each must be in the history exactly once. */
    const answered = new Map<string, string>();
    const figures: Figures = { turns: TURNS, processes_killed: ROUNDS, killed_mid_turn: 0, killed_after_result: 0, resumed: 0, stale_checkpoints: 0, new_turns_after_kill: 0, torn_lines_repaired: 0, warm_turn_ms: [] };
    const started = Date.now();
    let round = 0;
    try {
      for (; round < ROUNDS; round += 1) {
        const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
        assert.equal((await proc.request({ id: "w", method: "warm_up" }, TURN_TIMEOUT_MS)).type, "result");

        // The sessions the last kill interrupted, together: resume a turn that is on disk, else a new turn.
        const t0 = Date.now();
        await Promise.all(SESSIONS.map(async (session) => {
          const onDisk = await diskState(dataDir, session);
          if (onDisk.checkpointTrace !== null && !onDisk.historyTraces.includes(onDisk.checkpointTrace)) {
            const result = resultOf(await proc.request({ id: `r-${session}`, method: "chat", params: { session_id: session, resume: true } }, TURN_TIMEOUT_MS));
            assert.equal(result.trace_id, onDisk.checkpointTrace, "the interrupted turn is the one resumed");
            assert.equal(result.response, DEMO_SENTENCE);
            checkWarnings(result.warnings, figures);
            answered.set(result.trace_id, session);
            figures.resumed += 1;
            return;
          }
          if (onDisk.checkpointTrace !== null) {
            // Killed between saving the finished turn and removing its checkpoint: nothing to resume.
            figures.stale_checkpoints += 1;
            const refused = await proc.request({ id: `r-${session}`, method: "chat", params: { session_id: session, resume: true } }, TURN_TIMEOUT_MS);
            assert.equal(refused.code, "invalid_request", JSON.stringify(refused));
            assert.match(String(refused.message), /Nothing to resume/);
          }
          const result = resultOf(await proc.request({ id: `n-${session}`, method: "chat", params: { session_id: session, input: `check ${round} ${session}` } }, TURN_TIMEOUT_MS));
          assert.equal(result.response, DEMO_SENTENCE);
          checkWarnings(result.warnings, figures);
          answered.set(result.trace_id, session);
          if (round > 0) figures.new_turns_after_kill += 1;
        }));
        const warmMs = Date.now() - t0;
        figures.warm_turn_ms.push(warmMs);

        // The victims: a turn on every session at once, the process killed at a random moment of
        // about their length (so each turn is caught at another point of its own progress).
        const delayMs = Math.floor(random() * warmMs);
        for (const session of SESSIONS) proc.send({ id: `v-${session}`, method: "chat", params: { session_id: session, input: `turn ${round} ${session}` } });
        await sleep(delayMs);
        proc.kill("SIGKILL");
        assert.equal((await proc.exited).signal, "SIGKILL");
        assert.deepEqual(protocolViolations(proc).filter((p) => !p.startsWith("stdout does not end")), []);
        for (const session of SESSIONS) {
          const answer = proc.messages.find((m) => m.id === `v-${session}` && m.type !== "event");
          if (answer === undefined) figures.killed_mid_turn += 1;
          else {
            answered.set(resultOf(answer).trace_id, session);
            figures.killed_after_result += 1;
          }
        }
      }

      // A last process: each session resumes what is left, takes a new turn, and has no warning left.
      const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
      for (const session of SESSIONS) {
        const state = await diskState(dataDir, session);
        if (state.checkpointTrace !== null && !state.historyTraces.includes(state.checkpointTrace)) {
          const resumed = resultOf(await proc.request({ id: `r-${session}`, method: "chat", params: { session_id: session, resume: true } }, TURN_TIMEOUT_MS));
          checkWarnings(resumed.warnings, figures);
          answered.set(resumed.trace_id, session);
          figures.resumed += 1;
        }
        const last = resultOf(await proc.request({ id: `f-${session}`, method: "chat", params: { session_id: session, input: `final ${session}` } }, TURN_TIMEOUT_MS));
        assert.equal(last.response, DEMO_SENTENCE);
        assert.deepEqual(last.warnings.filter((w) => !/oldest history messages to fit/.test(w)), [], "nothing left to repair or discard");
        answered.set(last.trace_id, session);
      }
      proc.send({ id: "bye", method: "shutdown" });
      assert.equal((await proc.exited).code, 0, proc.stderr.slice(-2000));
      assert.deepEqual(protocolViolations(proc), []);

      // Every session through the store's own loader: no warning (nothing left to repair), whole
      // turns only (the user's input, then the demo sentence), no turn twice, every answered turn kept.
      const store = new FileSessionStore(dataDir);
      const seen = new Map<string, string>();
      let turns = 0;
      for (const session of SESSIONS) {
        const loaded = await store.loadHistory(USER, session);
        assert.deepEqual(loaded.warnings, [], `session ${session} loads clean`);
        const raw = (await readFile(sessionPaths(dataDir, USER, session).history, "utf8")).trim().split("\n");
        assert.equal(loaded.messages.length, raw.length * 2, `session ${session}: two messages per line`);
        raw.forEach((line, i) => {
          const entry = JSON.parse(line) as { trace_id: string; messages: Array<{ role: string; content: string }> };
          assert.deepEqual(entry.messages.map((m) => m.role), ["user", "assistant"], `session ${session} line ${i + 1}`);
          assert.match(entry.messages[0]!.content, /^(turn|check|final) /);
          assert.equal(entry.messages[1]!.content, DEMO_SENTENCE);
          assert.equal(seen.get(entry.trace_id), undefined, `turn ${entry.trace_id} is saved once`);
          seen.set(entry.trace_id, session);
          assert.equal(raw.filter((other) => other.includes(`"content":${JSON.stringify(entry.messages[0]!.content)}`)).length, 1, `input ${entry.messages[0]!.content} is saved once`);
        });
        turns += raw.length;
        const names = await readdir(sessionPaths(dataDir, USER, session).dir);
        assert.deepEqual(names.filter((name) => name.includes(".tmp") || name === "checkpoint.json" || name === "session.lock"), [], `session ${session}: nothing half-done left`);
      }
      for (const [trace, session] of answered) assert.equal(seen.get(trace), session, `answered turn ${trace} is in the history of ${session}`);
      const warm = [...figures.warm_turn_ms].sort((a, b) => a - b);
      t.diagnostic(JSON.stringify({ seed: SEED, ...figures, warm_turn_ms: { median: warm[Math.floor(warm.length / 2)], max: warm.at(-1) }, saved_turns: turns, seconds: Math.round((Date.now() - started) / 1000) }));
      await rm(dir, { recursive: true, force: true });
    } catch (error) {
      // The seed replays the same kill moments (as fractions of each round's warm turn).
      t.diagnostic(`failed in round ${round} with seed ${SEED}: LOCAL_AI_SEED=${SEED} LOCAL_AI_KILL_TURNS=${TURNS} node --test dist/test/e2e/fault-kill-turns.test.js`);
      throw new Error(`seed ${SEED}, round ${round}: ${(error as Error).message}`, { cause: error });
    }
  });
});
