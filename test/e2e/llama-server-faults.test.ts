// Faults of the llama-server engine through the built CLI (serve-stdio, v1) on a real llama-server:
// the server SIGKILLed mid-chat again and again (each chat a clear error, the circuit opens after
// repeated crashes and recovers after its cool-down, no orphan), and local-ai itself SIGKILLed
// (its server dies with it; the next start reaps nothing that is not its own).
// `npm run test:stress` (LOCAL_AI_STRESS=1) kills 20 times; `npm test` 3 times.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { rm } from "node:fs/promises";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { readPidFile, writePidFile } from "../../src/engine/llama-server/pid-file.js";
import { isProcessAlive } from "../../src/shared/process/is-process-alive.js";
import { waitForProcessExit } from "../../src/shared/process/wait-for-exit.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { processesOnPort, watchdogsOf, type ProcEntry } from "../helpers/llama-server-procs.js";
import { tempConfig } from "../helpers/temp-config.js";
import { freePort } from "../helpers/free-port.js";

const binary = findLlamaServerBinary();
const STRESS = process.env.LOCAL_AI_STRESS === "1";
const KILLS = STRESS ? 20 : 3;
/** llama.restart in the test config: the documented circuit, with a short cool-down. */
const CIRCUIT_FAILURES = 3;
/** Long enough that the next chat always meets the open circuit, short enough to wait out. */
const COOLDOWN_MS = 3000;
/** Bounds that only catch a hang (a SIGKILLed process is gone in milliseconds). */
const GONE_WITHIN_MS = 10_000;
const ANSWER_WITHIN_MS = 120_000;


function skipIfMissing(t: TestContext): boolean {
  if (binary !== null) return false;
  process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
  t.skip("llama-server not built: run npm run build:llama-server");
  return true;
}

async function serverConfig(port: number): Promise<{ dir: string; configPath: string }> {
  return tempConfig(
    [
      "llama:",
      `  binary: ${JSON.stringify(binary)}`,
      "  restart:",
      "    backoff_initial_ms: 50",
      "    backoff_max_ms: 200",
      `    circuit_failures: ${CIRCUIT_FAILURES}`,
      "    circuit_window_ms: 600000",
      `    circuit_cooldown_ms: ${COOLDOWN_MS}`,
      "  models:",
      "    default:",
      "      engine: llama-server",
      `      path: ${JSON.stringify(await ensureFixture("tiny"))}`,
      `      port: ${port}`,
      "      threads: 1",
      "      parallel: 1",
      "      ctx_size: 8192",
      "agents:",
      "  assistant:",
      "    temperature: 0",
      "    max_tokens: 2048",
      "",
    ].join("\n"),
  );
}

interface LogRecord {
  msg?: string;
  time?: number;
  child_pid?: number;
  circuit?: string;
  [key: string]: unknown;
}

/** The CLI's JSON log lines (stderr) so far. */
function logRecords(proc: CliProcess): LogRecord[] {
  const records: LogRecord[] = [];
  for (const line of proc.stderr.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      records.push(JSON.parse(line) as LogRecord);
    } catch {
      // a line still being written
    }
  }
  return records;
}

const pidFileOf = (dir: string): string => path.join(dir, "data", "run", "llama-server-default.pid");

/**
 * Orphans on our port: a llama-server whose parent is not the CLI, or a watchdog whose parent is
 * neither the CLI (the `sh` before its exec) nor a live process of the same server (its server).
 */
function orphansAmong(entries: readonly ProcEntry[], cliPid: number): ProcEntry[] {
  const pids = new Set(entries.map((entry) => entry.pid));
  return entries.filter((entry) => (entry.watchdog ? entry.ppid !== cliPid && !pids.has(entry.ppid) : entry.ppid !== cliPid));
}

function summary(values: readonly number[]): { min: number; median: number; max: number } | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)! };
}

interface KillRecord {
  pid: number;
  killedAt: number;
  answer: "engine_unavailable" | "result";
  killToAnswerMs: number;
  /** Kill to the next "llama-server ready" (a kill that opened the circuit waits out the cool-down and the next chat). */
  killToReadyMs?: number;
  /** Chats refused fast by the open circuit before this one could stream. */
  refusedBefore: number;
}

describe("llama-server faults through serve-stdio", { concurrency: false, timeout: 30 * 60_000 }, () => {
  it(`llama-server SIGKILLed mid-chat ${KILLS} times: each chat a clear error, the circuit opens and recovers, no orphan`, async (t) => {
    if (skipIfMissing(t)) return;
    const port = await freePort();
    const { dir, configPath } = await serverConfig(port);
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "info" } });
    const cliPid = proc.child.pid!;
    const kills: KillRecord[] = [];
    let orphanChecks = 0;
    const orphans: ProcEntry[] = [];
    let chats = 0;
    let lastRefused = 0;
    const finished: Array<{ kill: number; chars: number; output_tokens: number }> = [];

    /** Sends chats until one streams: a chat refused by the open circuit says when to try again. */
    const chatUntilStreaming = async (): Promise<{ id: string; refused: number }> => {
      for (let refused = 0; ; refused++) {
        const id = `chat-${++chats}`;
        proc.send({ id, method: "chat", params: { input: "Tell me a long story." } });
        const first = await proc.waitFor((m) => m.id === id && (m.type === "error" || m.type === "result" || (m.type === "event" && m.event === "llm_chunk")), ANSWER_WITHIN_MS);
        if (first.type === "event") return { id, refused };
        const details = first["details"] as { circuit?: string; retry_in_ms?: number } | undefined;
        assert.equal(first.type, "error", `a chat either streams or is refused by the open circuit: ${JSON.stringify(first)}`);
        assert.equal(first["code"], "engine_unavailable");
        assert.match(String(first["message"]), /is unavailable: it failed repeatedly \(circuit open; next attempt in \d+ s\)\. Last error: llama-server was killed by SIGKILL; restarting it/);
        assert.equal(details?.circuit, "open");
        const retryIn = details?.retry_in_ms;
        assert.ok(typeof retryIn === "number" && retryIn <= COOLDOWN_MS, JSON.stringify(details));
        // The refusal names the rest of the cool-down: wait exactly that, as a well-behaved host would.
        await delay(retryIn + 1);
      }
    };

    try {
      for (let kill = 1; kill <= KILLS; kill++) {
        const { id, refused } = await chatUntilStreaming();
        const pid = (await readPidFile(pidFileOf(dir)))?.pid;
        assert.ok(pid !== undefined && isProcessAlive(pid), "the pid file names the running server");
        const watchdogs = await watchdogsOf(pid);
        assert.equal(watchdogs.length, 1, `the server ${pid} runs with one watchdog`);
        const killedAt = Date.now();
        process.kill(pid, "SIGKILL");
        const answer = await proc.response(id, ANSWER_WITHIN_MS);
        const killToAnswerMs = Date.now() - killedAt;
        if (answer.type === "error") {
          // The generation was cut: the exact code, and what happened in words.
          assert.equal(answer["code"], "engine_unavailable", JSON.stringify(answer));
          assert.match(String(answer["message"]), /^llama-server for model "default" was killed by SIGKILL during generation; it is being restarted/);
        } else {
          // The generation had finished before the kill landed: a whole answer, never a cut one.
          assert.equal(answer.type, "result");
          const response = (answer["result"] as { response: string }).response;
          const final = proc.messages.find((m) => m.id === id && m.type === "event" && m.event === "final");
          assert.equal(final?.["response"], response, "the final event carries the whole answer");
          const usage = proc.messages.find((m) => m.id === id && m.type === "event" && m.event === "usage");
          finished.push({ kill, chars: response.length, output_tokens: Number(usage?.["output_tokens"]) });
        }
        kills.push({ pid, killedAt, answer: answer.type === "error" ? "engine_unavailable" : "result", killToAnswerMs, refusedBefore: refused });
        assert.ok(await waitForProcessExit(pid, GONE_WITHIN_MS), `killed server ${pid} is gone`);
        assert.ok(await waitForProcessExit(watchdogs[0]!, GONE_WITHIN_MS), `its watchdog ${watchdogs[0]!} ended with it`);
        orphanChecks += 1;
        orphans.push(...orphansAmong(await processesOnPort(port), cliPid));
      }

      // After the last kill: one more chat must get a whole answer (through half-open if the circuit is open).
      const last = await chatUntilStreaming();
      lastRefused = last.refused;
      const final = await proc.response(last.id, ANSWER_WITHIN_MS);
      assert.equal(final.type, "result", JSON.stringify(final));
      const running = await processesOnPort(port);
      assert.deepEqual(running.filter((entry) => !entry.watchdog).map((entry) => entry.ppid), [cliPid], "one server, ours");
      orphans.push(...orphansAmong(running, cliPid));
      orphanChecks += 1;

      proc.send({ id: "bye", method: "shutdown" });
      assert.equal((await proc.exited).code, 0);
      assert.deepEqual(protocolViolations(proc), []);
    } finally {
      // A failure mid-way: the CLI goes (its server with it, through the watchdog).
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.kill("SIGKILL");
    }

    // Nothing of ours is left on the port once the CLI is gone.
    let left = await processesOnPort(port);
    const until = Date.now() + GONE_WITHIN_MS;
    while (left.length > 0 && Date.now() < until) {
      await waitForProcessExit(left[0]!.pid, until - Date.now());
      left = await processesOnPort(port);
    }
    assert.deepEqual(left, [], "no llama-server or watchdog outlives the CLI");
    assert.deepEqual(orphans, [], "no orphan at any check");

    // The circuit, from the log: it opened after every CIRCUIT_FAILURES crashes and recovered each time.
    const records = logRecords(proc);
    const transitions = records.filter((r) => typeof r.msg === "string" && r.msg.startsWith("llama-server circuit ")).map((r) => r.circuit);
    const opens = Math.floor(KILLS / CIRCUIT_FAILURES);
    assert.deepEqual(transitions, Array.from({ length: opens }, () => ["open", "half_open", "closed"]).flat());
    const refusedByCircuit = kills.reduce((sum, k) => sum + k.refusedBefore, 0) + lastRefused;
    assert.ok(refusedByCircuit >= opens, `every open circuit refused the next chat with its error (${refusedByCircuit} refusals)`);
    const readies = records.filter((r) => r.msg === "llama-server ready" && typeof r.time === "number").map((r) => r.time!);
    assert.equal(readies.length, KILLS + 1, "one start per kill, plus the first");
    assert.equal(records.filter((r) => r.msg === "llama-server went down").length, KILLS, "every kill seen as a crash");
    for (const record of kills) {
      const ready = readies.find((time) => time > record.killedAt);
      if (ready !== undefined) record.killToReadyMs = ready - record.killedAt;
    }
    const opened = new Set(kills.filter((_, index) => (index + 1) % CIRCUIT_FAILURES === 0).map((k) => k.pid));
    const figures = {
      kills: KILLS,
      answers: { engine_unavailable: kills.filter((k) => k.answer === "engine_unavailable").length, result: kills.filter((k) => k.answer === "result").length },
      finished_before_the_kill: finished,
      kill_to_answer_ms: summary(kills.map((k) => k.killToAnswerMs)),
      kill_to_ready_ms_restart: summary(kills.filter((k) => !opened.has(k.pid)).map((k) => k.killToReadyMs ?? NaN)),
      kill_to_ready_ms_after_circuit: summary(kills.filter((k) => opened.has(k.pid)).map((k) => k.killToReadyMs ?? NaN)),
      refused_by_open_circuit: refusedByCircuit,
      circuit: { opened: opens, half_open: opens, closed: opens },
      restarts: KILLS,
      orphan_checks: orphanChecks,
      orphans: orphans.length,
    };
    t.diagnostic(JSON.stringify(figures));
    process.stderr.write(`llama-server kill figures: ${JSON.stringify(figures)}\n`);
    await rm(dir, { recursive: true, force: true });
  });

  it("a SIGKILLed local-ai takes its llama-server and the watchdog with it; the next start reaps nothing that is not its own", async (t) => {
    if (skipIfMissing(t)) return;
    const port = await freePort();
    const { dir, configPath } = await serverConfig(port);
    const first = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const warm = await first.request({ id: "warm", method: "warm_up", params: {} }, ANSWER_WITHIN_MS);
    assert.equal(warm.type, "result", JSON.stringify(warm));
    const pid = (await readPidFile(pidFileOf(dir)))?.pid;
    assert.ok(pid !== undefined && isProcessAlive(pid));
    const [server] = (await processesOnPort(port)).filter((entry) => !entry.watchdog);
    assert.equal(server?.pid, pid);
    assert.equal(server?.ppid, first.child.pid, "the server is the CLI's own child");
    const watchdogs = await watchdogsOf(pid);
    assert.equal(watchdogs.length, 1);

    const killedAt = Date.now();
    first.kill("SIGKILL"); // no handler, no exit hook of ours runs
    assert.equal((await first.exited).signal, "SIGKILL");
    assert.ok(await waitForProcessExit(pid, GONE_WITHIN_MS), `llama-server ${pid} outlived the SIGKILLed local-ai`);
    const goneMs = Date.now() - killedAt;
    assert.ok(await waitForProcessExit(watchdogs[0]!, GONE_WITHIN_MS), "the watchdog ended too");
    assert.deepEqual(await processesOnPort(port), [], "nothing of ours on the port");
    t.diagnostic(JSON.stringify({ parent_sigkill_to_server_gone_ms: goneMs }));

    // The stale pid file now names a dead pid. Make it name a live process that is not a llama-server
    // (as after pid reuse): the next start must leave that process alone.
    const stale = await readPidFile(pidFileOf(dir));
    assert.equal(stale?.pid, pid, "SIGKILL left the pid file behind");
    const bystander = spawn(process.execPath, ["-e", "setInterval(() => {}, 60000)"], { stdio: "ignore" });
    try {
      await writePidFile(pidFileOf(dir), { ...stale, pid: bystander.pid! });
      const second = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "info" } });
      const again = await second.request({ id: "warm", method: "warm_up", params: {} }, ANSWER_WITHIN_MS);
      assert.equal(again.type, "result", JSON.stringify(again));
      assert.ok(isProcessAlive(bystander.pid!), "a process that is not our llama-server is never reaped");
      const records = logRecords(second);
      assert.ok(records.some((r) => r.msg === "stale llama-server pid file names another process; leaving it alone" && r["recorded_pid"] === bystander.pid));
      assert.ok(!records.some((r) => typeof r.msg === "string" && r.msg.startsWith("reaping")));
      const next = (await readPidFile(pidFileOf(dir)))?.pid;
      assert.ok(next !== undefined && next !== bystander.pid && isProcessAlive(next));
      second.send({ id: "bye", method: "shutdown" });
      assert.equal((await second.exited).code, 0);
      assert.ok(await waitForProcessExit(next, GONE_WITHIN_MS));
    } finally {
      bystander.kill("SIGKILL");
      await once(bystander, "exit").catch(() => undefined);
    }
    await rm(dir, { recursive: true, force: true });
  });
});
