import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { BenchResult } from "./bench-results.js";

/**
 * `npm run bench`: every bench script in sequence (each keeps its own output), then one table of
 * the ratios they reported (bench/bench-results.ts: each appends a JSON line to
 * $BENCH_RESULTS_FILE). A bench that crashes is a row saying so and makes the exit code 1; a
 * target not met is a figure, not a failure.
 *
 * Env: BENCH_ONLY=kv,start (these, in this order), BENCH_SKIP=engine,http; each bench's own
 * variables (BENCH_ROUNDS, BENCH_KV_TURNS...) pass through.
 */

const BENCHES = [
  { name: "writer", script: "writer.bench.js" },
  { name: "start", script: "start.bench.js" },
  { name: "turn", script: "turn.bench.js" },
  { name: "http", script: "http.bench.js" },
  { name: "responses", script: "http-responses.bench.js" },
  { name: "messages", script: "messages.bench.js" },
  { name: "kv", script: "kv.bench.js" },
  { name: "prefill", script: "prefill.bench.js" },
  { name: "parallel", script: "parallel.bench.js" },
  { name: "engine", script: "engine.bench.js" },
  { name: "plan", script: "plan-accuracy.bench.js" },
] as const;

const here = path.dirname(fileURLToPath(import.meta.url));
const out = (line = ""): void => void process.stdout.write(`${line}\n`);
const list = (value: string | undefined): string[] => (value ?? "").split(",").map((item) => item.trim()).filter((item) => item !== "");

function selected(): Array<(typeof BENCHES)[number]> {
  const only = list(process.env.BENCH_ONLY);
  const skip = new Set(list(process.env.BENCH_SKIP));
  const known = new Set<string>(BENCHES.map((bench) => bench.name));
  const unknown = [...only, ...skip].filter((name) => !known.has(name));
  if (unknown.length > 0) throw new Error(`unknown bench ${unknown.join(", ")}; known: ${[...known].join(", ")}`);
  const chosen = only.length > 0 ? only.map((name) => BENCHES.find((bench) => bench.name === name) as (typeof BENCHES)[number]) : [...BENCHES];
  return chosen.filter((bench) => !skip.has(bench.name));
}

function runBench(script: string, resultsFile: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, script)], { stdio: "inherit", env: { ...process.env, BENCH_RESULTS_FILE: resultsFile } });
    child.on("error", reject);
    child.on("exit", (code) => resolve(code));
  });
}

const formatValue = (value: number): string => (Number.isFinite(value) ? value.toFixed(value >= 10 ? 1 : 3) : String(value));

const benches = selected();
const dir = await mkdtemp(path.join(tmpdir(), "bench-all-"));
const resultsFile = path.join(dir, "results.jsonl");
const runs: Array<{ name: string; code: number | null; seconds: number }> = [];
for (const bench of benches) {
  out(`\n===== bench:${bench.name} (${bench.script}) =====`);
  const started = performance.now();
  const code = await runBench(bench.script, resultsFile);
  runs.push({ name: bench.name, code, seconds: (performance.now() - started) / 1000 });
}
const text = await readFile(resultsFile, "utf8").catch(() => "");
await rm(dir, { recursive: true, force: true });
const results = text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as BenchResult);

out(`\n===== summary: ${runs.length} benches, ${new Date().toISOString()} =====`);
out("| bench | ratio | value | target | met |");
out("| --- | --- | ---: | --- | --- |");
let crashed = 0;
for (const run of runs) {
  const ratios = results.filter((result) => result.bench === run.name).flatMap((result) => result.ratios);
  if (run.code !== 0 || ratios.length === 0) {
    if (run.code !== 0) crashed++;
    out(`| ${run.name} | ${run.code === 0 ? "no ratios reported" : `failed (exit ${String(run.code)})`} | | | |`);
    continue;
  }
  for (const item of ratios) out(`| ${run.name} | ${item.name} | ${formatValue(item.value)} | ${item.target ?? ""} | ${item.met === undefined ? "" : item.met ? "yes" : "NO"} |`);
}
out();
out(`durations: ${runs.map((run) => `${run.name} ${run.seconds.toFixed(0)} s`).join(", ")}`);
process.exitCode = crashed > 0 ? 1 : 0;
