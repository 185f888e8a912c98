import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { CLI_PATH } from "../helpers/cli-process.js";
import { LineGenerator, type Dialect, type Expectation } from "../helpers/random-lines.js";
import { tempConfig } from "../helpers/temp-config.js";

/**
 * Random lines, good and bad, through the built CLI: no crash, exactly one answer per non-empty
 * line (JSON-RPC notifications excepted), every good line answered with its own id.
 * `npm test` sends 2,500 lines per dialect; `npm run test:stress` (LOCAL_AI_STRESS=1) 100,000.
 */
const STRESS = process.env.LOCAL_AI_STRESS === "1";
const LINES = Number(process.env.LOCAL_AI_RANDOM_LINES ?? (STRESS ? 100_000 : 2_500));
const SEED = Number(process.env.LOCAL_AI_SEED ?? 20261201);
const MAX_LINE_BYTES = 2048;

type Frame = Record<string, unknown>;

/** What one answer says: its id (as a key keeping the JSON type) and its outcome. */
function outcomeOf(dialect: Dialect, frame: Frame): { id: string | number | null; outcome: string } {
  const id = frame.id as string | number | null;
  if (dialect === "v1") return { id, outcome: frame.type === "result" ? "result" : String(frame.code) };
  return { id, outcome: "result" in frame ? "result" : String((frame.error as { code: number }).code) };
}

const key = (id: string | number | null): string => (id === null ? "null" : `${typeof id}:${String(id)}`);

interface RunFigures {
  lines: number;
  answers: number;
  busyAnswers: number;
  seconds: number;
  peakRssMiB: number;
  categories: Record<string, number>;
}

async function runRandomLines(dialect: Dialect, count: number): Promise<RunFigures> {
  const { dir, configPath } = await tempConfig(`stdio:\n  max_line_bytes: ${MAX_LINE_BYTES}\n`);
  const generator = new LineGenerator(dialect, SEED + (dialect === "v1" ? 0 : 1), MAX_LINE_BYTES);
  const expectations: Expectation[] = [];
  const categories: Record<string, number> = {};
  const chunks: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const line = generator.next();
    expectations.push(line.expect);
    categories[line.category] = (categories[line.category] ?? 0) + 1;
    chunks.push(line.bytes, Buffer.from("\n"));
  }
  const expectedAnswers = expectations.filter((e) => e.kind !== "none").length;

  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [CLI_PATH, "serve-stdio", "--protocol", dialect, "--config", configPath], {
    cwd: dir,
    env: { ...process.env, LOCAL_AI_LOG_LEVEL: "error" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-20_000)));
  const frames: unknown[] = [];
  const notJson: string[] = [];
  let partial = "";
  let peakRss = 0;
  const sampleRss = async (): Promise<void> => {
    const status = await readFile(`/proc/${child.pid}/status`, "utf8").catch(() => "");
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    if (hwm) peakRss = Math.max(peakRss, Number(hwm[1]) / 1024);
  };
  let resolveAll: () => void = () => undefined;
  const allAnswered = new Promise<void>((resolve) => (resolveAll = resolve));
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    for (const text of parts) {
      try {
        frames.push(JSON.parse(text));
      } catch {
        notJson.push(text.slice(0, 200));
      }
    }
    if (frames.length >= expectedAnswers) resolveAll();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const crashed = exited.then(({ code, signal }) => {
    throw new Error(`the CLI exited (${code ?? signal}) after ${frames.length} of ${expectedAnswers} answers; stderr: ${stderr}`);
  });

  // Honour backpressure: a host writing faster than the server reads must not need unbounded memory.
  for (const chunk of chunks) {
    if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once("drain", resolve));
  }
  await Promise.race([allAnswered, crashed]);
  await sampleRss();
  child.stdin.end();
  const { code } = await exited;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  assert.equal(code, 0, stderr);
  assert.deepEqual(notJson, [], "every stdout line is JSON");
  assert.doesNotMatch(stderr, /"level":(50|60)/, "no error or fatal log");

  // Match: answers by id; id-null answers as a multiset; a batch's entries join the same pools and
  // its array sizes are compared. Under this flood more than 256 requests can be in flight: any
  // method but ping (and cancel, shutdown) may then be answered `busy`, which is its one answer.
  const busy = dialect === "v1" ? "busy" : "-32007";
  const byId = new Map<string, string[]>();
  const nullOutcomes: string[] = [];
  const batchSizes: number[] = [];
  const record = (frame: Frame): void => {
    assert.notEqual(frame.type, "event", "no event for these requests");
    const { id, outcome } = outcomeOf(dialect, frame);
    if (id === null) nullOutcomes.push(outcome);
    else byId.set(key(id), [...(byId.get(key(id)) ?? []), outcome]);
  };
  for (const frame of frames) {
    if (Array.isArray(frame)) {
      batchSizes.push(frame.length);
      (frame as Frame[]).forEach(record);
    } else record(frame as Frame);
  }
  const expectedNull: string[] = [];
  const expectedBatchSizes: number[] = [];
  let busyAnswers = 0;
  const expectId = (id: string | number, outcome: string): void => {
    const got = byId.get(key(id));
    if (outcome !== "result" && got?.length === 1 && got[0] === busy) busyAnswers += 1;
    else assert.deepEqual(got, [outcome], `the answer to id ${key(id)}`);
    byId.delete(key(id));
  };
  for (const expect of expectations) {
    if (expect.kind === "id") expectId(expect.id, expect.outcome);
    else if (expect.kind === "null") expectedNull.push(expect.outcome);
    else if (expect.kind === "batch") {
      expectedBatchSizes.push(expect.entries.length);
      for (const entry of expect.entries) {
        if (entry.id === null) expectedNull.push(entry.outcome);
        else expectId(entry.id, entry.outcome);
      }
    }
  }
  assert.deepEqual([...byId.keys()], [], "no answer for an id that was never sent");
  assert.deepEqual(nullOutcomes.sort(), expectedNull.sort(), "the id-null answers");
  assert.deepEqual(batchSizes.sort(), expectedBatchSizes.sort(), "one array per answered batch, one entry per call with an id");
  assert.equal(frames.length, expectedAnswers, "exactly one answer per answerable line");
  return { lines: count, answers: frames.length, busyAnswers, seconds, peakRssMiB: Math.round(peakRss), categories };
}

describe(`random lines through serve-stdio (${LINES} per dialect, seed ${SEED})`, () => {
  for (const dialect of ["v1", "jsonrpc"] as const) {
    it(`${dialect}: no crash, one answer per non-empty line, every good line answered`, { timeout: STRESS ? 900_000 : 120_000 }, async (t) => {
      const figures = await runRandomLines(dialect, LINES);
      t.diagnostic(`${dialect}: ${JSON.stringify(figures)}`);
    });
  }
});
