import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { findLlamaServerBinary } from "../test/helpers/llama-server-binary.js";
import { ensureFixture } from "../test/fixtures/gguf/index.js";

/**
 * bench:kv — sessions taking turns on one serve-stdio (the built CLI), each turn adding ~300 new
 * tokens: time to first token per turn, and how much of the previous prompt came from the KV cache
 * (`cached_input_tokens / (input_tokens - new tokens)`). The baseline is the same run's first turn:
 * without reuse, time to first token grows with the history (turn 5 / turn 1 was 9.4x on main);
 * with it, each turn evaluates only what is new. Both engines; 2 and 4 sessions.
 *
 * Each session has its own user, so memory notes from the other sessions do not add to the new
 * tokens of a turn (they would, by up to the memory budget, and change the ratio for that reason).
 *
 * Env: BENCH_KV_MODEL=small|tiny (small: the 84M bench model), BENCH_KV_TURNS (8), BENCH_KV_WORDS (220).
 */

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const turns = Number(process.env.BENCH_KV_TURNS ?? "8");
const words = Number(process.env.BENCH_KV_WORDS ?? "220");
const modelKind = process.env.BENCH_KV_MODEL ?? "small";
const out = (line = ""): void => void process.stdout.write(`${line}\n`);

const VOCABULARY = "river stone garden window lantern meadow copper violin harbor orchard thunder pepper canvas silver bridge mirror candle forest pocket ladder".split(" ");

/** Deterministic filler text of `count` words (a different text for each session and turn). */
function filler(seed: number, count: number): string {
  let state = seed * 2654435761 >>> 0;
  const picked: string[] = [];
  for (let i = 0; i < count; i++) {
    state = (state * 1664525 + 1013904223) >>> 0;
    picked.push(VOCABULARY[state % VOCABULARY.length] as string);
  }
  return picked.join(" ");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

interface TurnFigure {
  session: number;
  turn: number;
  ttftMs: number;
  input: number;
  output: number;
  cached: number;
}

type Line = Record<string, unknown>;

/** One serve-stdio; chats one at a time, recording the first chunk's arrival and the usage event. */
async function runScenario(engine: "embedded" | "llama-server", sessions: number, modelPath: string, binary: string | null): Promise<TurnFigure[]> {
  const dir = await mkdtemp(path.join(tmpdir(), "bench-kv-"));
  const port = await freePort();
  // llama-server splits its context among its slots; node-llama-cpp gives each sequence the whole size.
  const ctx = engine === "llama-server" ? 4096 * sessions : 4096;
  const model = [`      path: ${JSON.stringify(modelPath)}`, "      threads: 1", `      ctx_size: ${ctx}`, `      parallel: ${sessions}`, ...(engine === "llama-server" ? ["      engine: llama-server", `      port: ${port}`] : [])];
  const config = ["app:", "  data_dir: ./data", "llama:", ...(binary === null ? [] : [`  binary: ${JSON.stringify(binary)}`]), "  models:", "    default:", ...model, "agents:", "  assistant:", "    temperature: 0", "    max_tokens: 24", ""].join("\n");
  await writeFile(path.join(dir, "config.yaml"), config);
  const child = spawn(process.execPath, [CLI, "serve-stdio", "--config", "config.yaml"], { cwd: dir, env: { ...process.env, LOCAL_AI_LOG_LEVEL: "warn" }, stdio: ["pipe", "pipe", "inherit"] });
  child.stdout.setEncoding("utf8");
  let partial = "";
  const listeners = new Set<(line: Line, at: number) => void>();
  child.stdout.on("data", (chunk: string) => {
    const at = performance.now();
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    for (const text of parts) for (const listener of [...listeners]) listener(JSON.parse(text) as Line, at);
  });
  const request = (message: Line): Promise<{ lines: Array<{ line: Line; at: number }>; sentAt: number }> =>
    new Promise((resolve) => {
      const lines: Array<{ line: Line; at: number }> = [];
      const listener = (line: Line, at: number): void => {
        if (line.id !== message.id) return;
        lines.push({ line, at });
        if (line.type === "result" || line.type === "error") {
          listeners.delete(listener);
          resolve({ lines, sentAt });
        }
      };
      listeners.add(listener);
      const sentAt = performance.now();
      child.stdin.write(`${JSON.stringify(message)}\n`);
    });
  await request({ id: "warm", method: "warm_up", params: {} });
  const figures: TurnFigure[] = [];
  let id = 0;
  for (let turn = 1; turn <= turns; turn++) {
    for (let session = 1; session <= sessions; session++) {
      const { lines, sentAt } = await request({ id: ++id, method: "chat", params: { session_id: `s${session}`, user_id: `u${session}`, input: filler(session * 100 + turn, words) } });
      const end = lines.at(-1)?.line;
      if (end?.type !== "result") throw new Error(`turn failed: ${JSON.stringify(end)}`);
      const first = lines.find(({ line }) => line.event === "llm_chunk");
      const usage = lines.find(({ line }) => line.event === "usage")?.line ?? {};
      figures.push({ session, turn, ttftMs: (first?.at ?? Number.NaN) - sentAt, input: Number(usage.input_tokens), output: Number(usage.output_tokens), cached: Number(usage.cached_input_tokens ?? 0) });
    }
  }
  child.stdin.write(`${JSON.stringify({ id: "bye", method: "shutdown" })}\n`);
  await new Promise((resolve) => child.on("exit", resolve));
  await rm(dir, { recursive: true, force: true });
  return figures;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

function report(name: string, figures: TurnFigure[], sessions: number): string {
  const byTurn = (turn: number): TurnFigure[] => figures.filter((f) => f.turn === turn);
  const ttft = (turn: number): number => median(byTurn(turn).map((f) => f.ttftMs));
  // Reusable = what the previous turn of the session evaluated and produced; the rest is new.
  const reuse = figures.filter((f) => f.turn > 1).map((f) => {
    const previous = figures.find((p) => p.session === f.session && p.turn === f.turn - 1) as TurnFigure;
    return f.cached / Math.max(1, previous.input + previous.output);
  });
  out(`\n${name}: ${sessions} sessions x ${turns} turns (~${words} words new per turn)`);
  out("turn | median TTFT ms | median input tokens | median cached");
  for (let turn = 1; turn <= turns; turn++) out(`${String(turn).padStart(4)} | ${ttft(turn).toFixed(1).padStart(14)} | ${String(median(byTurn(turn).map((f) => f.input))).padStart(19)} | ${String(median(byTurn(turn).map((f) => f.cached))).padStart(13)}`);
  const last = Math.min(5, turns);
  const ratio = ttft(last) / ttft(1);
  out(`TTFT turn ${last} / turn 1 = ${ratio.toFixed(2)}x (target <= 1.5x); cached / reusable prompt, median over turns 2+: ${median(reuse).toFixed(3)}`);
  return `| ${name} | ${sessions} | ${ratio.toFixed(2)}x | ${median(reuse).toFixed(3)} |`;
}

const modelPath = modelKind === "tiny" ? await ensureFixture("tiny", { seed: 3 }) : await ensureFixture("bench", { shape: "small" });
const binary = findLlamaServerBinary();
out(`bench:kv  model: ${modelKind} ${modelPath}  llama-server: ${binary ?? "not built (skipped)"}`);
const rows: string[] = [];
for (const engine of ["embedded", "llama-server"] as const) {
  if (engine === "llama-server" && binary === null) continue;
  for (const sessions of [2, 4]) rows.push(report(engine, await runScenario(engine, sessions, modelPath, binary), sessions));
}
out("\n| engine | sessions | TTFT turn 5 / turn 1 | cached / reusable |");
out("| --- | --- | --- | --- |");
for (const row of rows) out(row);
