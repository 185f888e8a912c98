import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { ratio, reportRatios } from "./bench-results.js";

/**
 * bench:start — cold start of the built CLI against a bare `node` doing the same I/O, in the same
 * run, rounds interleaved (the machine's load drifts; medians of interleaved rounds are fair):
 *
 * 1. `serve-stdio`: spawn -> the first `ping` result on stdout, vs `node -e` that reads one line
 *    and writes one line.
 * 2. `serve-stdio`: spawn -> the first `plan` answer (the first method that builds the runtime;
 *    the model file is missing, so the plan fails at once), vs the same bare node.
 * 3. `--version`: spawn -> exit, vs `node -e 'process.stdout.write("x\n")'`.
 * 4. `doctor --json` (a small valid config, no model file): spawn -> exit, vs the same bare node
 *    (doctor does real checks, so its absolute time is printed too).
 *
 * Env: BENCH_ROUNDS (15), LOCAL_AI_CLI (the CLI to measure; default this build's, so the same
 * bench can measure another checkout's build: the "before" figures). See docs/benchmarks.md.
 */

const rounds = Number(process.env.BENCH_ROUNDS ?? "15");
const cli = process.env.LOCAL_AI_CLI ?? fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const out = (line = ""): void => void process.stdout.write(`${line}\n`);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface Run {
  args: string[];
  /** Written to stdin at spawn (the request). */
  input?: string;
  /** Done at the first stdout line (a long-running server), or at exit. */
  until: "first-line" | "exit";
  cwd?: string;
}

/** Milliseconds from spawn to the first stdout line or to exit; the child is killed after a first line. */
function timeRun(run: Run): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, run.args, {
      stdio: ["pipe", "pipe", "ignore"],
      cwd: run.cwd,
      env: { ...process.env, LOCAL_AI_LOG_LEVEL: "warn" },
    });
    let stdout = "";
    let firstLineAt: number | null = null;
    child.on("error", reject);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
      if (run.until === "first-line" && firstLineAt === null && stdout.includes("\n")) {
        firstLineAt = performance.now() - started;
        child.kill("SIGKILL");
      }
    });
    child.on("close", () => {
      if (run.until === "first-line") {
        if (firstLineAt === null) reject(new Error(`no line from ${run.args.join(" ")}`));
        else resolve(firstLineAt);
      } else {
        if (stdout === "") reject(new Error(`no output from ${run.args.join(" ")}`));
        else resolve(performance.now() - started);
      }
    });
    child.stdin.on("error", () => undefined);
    if (run.input !== undefined) child.stdin.write(run.input);
    if (run.until === "exit") child.stdin.end();
  });
}

const PING = `${JSON.stringify({ id: 1, method: "ping" })}\n`;
const PLAN = `${JSON.stringify({ id: 1, method: "plan" })}\n`;
const BARE_ECHO = 'process.stdin.once("data", () => process.stdout.write("{}\\n"))';
const BARE_WRITE = 'process.stdout.write("x\\n")';

const dir = await mkdtemp(path.join(tmpdir(), "bench-start-"));
const config = path.join(dir, "config.yaml");
await writeFile(config, `app:\n  data_dir: ${JSON.stringify(path.join(dir, "data"))}\nllama:\n  models:\n    default:\n      path: ./model.gguf\n`);

const cases: Array<{ name: string; subject: Run; baseline: Run }> = [
  {
    name: "serve-stdio: spawn -> first ping result",
    subject: { args: [cli, "serve-stdio", "--config", config], input: PING, until: "first-line" },
    baseline: { args: ["-e", BARE_ECHO], input: PING, until: "first-line" },
  },
  {
    // The first method that needs the runtime builds the composition root (engine registry, MCP
    // client, store): what that imports is what this case shows (the plan itself fails at once).
    name: "serve-stdio: spawn -> first plan answer (runtime built, model file missing)",
    subject: { args: [cli, "serve-stdio", "--config", config], input: PLAN, until: "first-line", cwd: dir },
    baseline: { args: ["-e", BARE_ECHO], input: PLAN, until: "first-line" },
  },
  { name: "--version", subject: { args: [cli, "--version"], until: "exit" }, baseline: { args: ["-e", BARE_WRITE], until: "exit" } },
  {
    name: "doctor --json",
    subject: { args: [cli, "doctor", "--json", "--config", config], until: "exit", cwd: dir },
    baseline: { args: ["-e", BARE_WRITE], until: "exit" },
  },
];

const samples = cases.map(() => ({ subject: [] as number[], baseline: [] as number[] }));
// Warm the file cache once so round 1 is not an outlier.
for (const c of cases) await Promise.all([timeRun(c.subject), timeRun(c.baseline)]);
for (let round = 0; round < rounds; round++) {
  for (const [index, c] of cases.entries()) {
    // Alternate the order: neither side always runs right after the other's exit.
    const first = round % 2 === 0 ? "subject" : "baseline";
    const second = first === "subject" ? "baseline" : "subject";
    samples[index]![first].push(await timeRun(c[first]));
    samples[index]![second].push(await timeRun(c[second]));
  }
}
await rm(dir, { recursive: true, force: true });

out(`bench:start — ${rounds} interleaved rounds, medians; CLI ${cli}`);
out(`node ${process.version}, ${process.platform}/${process.arch}`);
out();
out("| case | local-ai ms | bare node ms | ratio |");
out("| --- | ---: | ---: | ---: |");
const ratios = cases.map((c, index) => {
  const subject = median(samples[index]!.subject);
  const baseline = median(samples[index]!.baseline);
  out(`| ${c.name} | ${subject.toFixed(0)} | ${baseline.toFixed(0)} | ${(subject / baseline).toFixed(2)}x |`);
  // Issue 10's target is on the first ping (a host waits for it); the others are reported as they are.
  return ratio(`${c.name} / bare node`, subject / baseline, index === 0 ? { atMost: 2 } : undefined);
});
reportRatios("start", ratios);
