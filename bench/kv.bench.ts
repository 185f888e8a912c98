import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { measureKvFloor } from "./kv-floor.js";
import { startStdioCli, type StdioCli } from "./stdio-cli.js";
import { median, ratio, reportRatios, type BenchRatio } from "./bench-results.js";
import { findLlamaServerBinary } from "../test/helpers/llama-server-binary.js";
import { ensureFixture } from "../test/fixtures/gguf/index.js";
import { freePort } from "../test/helpers/free-port.js";

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
 * "Restored after restart": a session's next turn in a fresh process, its KV state restored from
 * <data_dir>/kv-cache, against the same turn evaluated cold (kv_cache_disk_bytes 0).
 *
 * Env: BENCH_KV_MODEL=small|tiny (small: the 84M bench model), BENCH_KV_TURNS (8), BENCH_KV_WORDS (100: ~330 new tokens a turn, as issue 10 measured),
 * BENCH_KV_RESTART_ROUNDS (3), BENCH_KV_SCENARIOS ("floor,turns,restart"), BENCH_KV_ENGINES ("embedded,llama-server").
 */

const turns = Number(process.env.BENCH_KV_TURNS ?? "8");
const words = Number(process.env.BENCH_KV_WORDS ?? "100");
const modelKind = process.env.BENCH_KV_MODEL ?? "small";
const restartRounds = Number(process.env.BENCH_KV_RESTART_ROUNDS ?? "3");
/** Which parts run: "turns" (sessions taking turns, both engines), "restart" (restored after restart). */
const scenarios = new Set((process.env.BENCH_KV_SCENARIOS ?? "floor,turns,restart").split(","));
const engines = new Set((process.env.BENCH_KV_ENGINES ?? "embedded,llama-server").split(","));
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


interface TurnFigure {
  session: number;
  turn: number;
  ttftMs: number;
  input: number;
  output: number;
  cached: number;
}

type Cli = StdioCli;

/** The built CLI's serve-stdio in `dir` (config.yaml there), warmed up (model loaded) before it is returned. */
async function startCli(dir: string): Promise<Cli> {
  const cli = startStdioCli(dir);
  await cli.request({ id: "warm", method: "warm_up", params: {} });
  return cli;
}

let nextId = 0;

/** One chat turn: time to first `llm_chunk` and the usage event's figures. */
async function chat(cli: Cli, session: number, turn: number): Promise<TurnFigure> {
  const { lines, sentAt } = await cli.request({ id: ++nextId, method: "chat", params: { session_id: `s${session}`, user_id: `u${session}`, input: filler(session * 100 + turn, words) } });
  const end = lines.at(-1)?.line;
  if (end?.type !== "result") throw new Error(`turn failed: ${JSON.stringify(end)}`);
  const first = lines.find(({ line }) => line.event === "llm_chunk");
  const usage = lines.find(({ line }) => line.event === "usage")?.line ?? {};
  return { session, turn, ttftMs: (first?.at ?? Number.NaN) - sentAt, input: Number(usage.input_tokens), output: Number(usage.output_tokens), cached: Number(usage.cached_input_tokens ?? 0) };
}

function configYaml(engine: "embedded" | "llama-server", sessions: number, modelPath: string, binary: string | null, port: number, kvDiskBytes?: number): string {
  // llama-server splits its context among its slots; node-llama-cpp gives each sequence the whole size.
  const ctx = engine === "llama-server" ? 4096 * sessions : 4096;
  const model = [
    `      path: ${JSON.stringify(modelPath)}`,
    "      threads: 1",
    `      ctx_size: ${ctx}`,
    `      parallel: ${sessions}`,
    ...(kvDiskBytes === undefined ? [] : [`      kv_cache_disk_bytes: ${kvDiskBytes}`]),
    ...(engine === "llama-server" ? ["      engine: llama-server", `      port: ${port}`] : []),
  ];
  return ["app:", "  data_dir: ./data", "llama:", ...(binary === null ? [] : [`  binary: ${JSON.stringify(binary)}`]), "  models:", "    default:", ...model, "agents:", "  assistant:", "    temperature: 0", "    max_tokens: 24", ""].join("\n");
}

/** One serve-stdio; chats one at a time, sessions taking turns. */
async function runScenario(engine: "embedded" | "llama-server", sessions: number, modelPath: string, binary: string | null): Promise<TurnFigure[]> {
  const dir = await mkdtemp(path.join(tmpdir(), "bench-kv-"));
  await writeFile(path.join(dir, "config.yaml"), configYaml(engine, sessions, modelPath, binary, await freePort()));
  const cli = await startCli(dir);
  const figures: TurnFigure[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    for (let session = 1; session <= sessions; session++) figures.push(await chat(cli, session, turn));
  }
  await cli.stop();
  await rm(dir, { recursive: true, force: true });
  return figures;
}

interface RestartFigure {
  /** Turn 1, the first chat of the first process (the same fixed first-chat costs as the fresh processes). */
  firstTurn: TurnFigure;
  restored: TurnFigure;
  cold: TurnFigure;
  previous: TurnFigure;
}

/**
 * "Restored after restart" (embedded): one session's turns 1..N-1 in a process that then shuts
 * down (saving its KV state under data_dir), then turn N in a fresh process, against the same
 * turn N in a fresh process on a copy of the data dir with kv_cache_disk_bytes 0 (the same
 * history, evaluated cold). Both fresh processes are warmed up (model loaded) before the turn.
 */
async function runRestart(modelPath: string): Promise<RestartFigure> {
  const dir = await mkdtemp(path.join(tmpdir(), "bench-kv-restart-"));
  const coldDir = `${dir}-cold`;
  await writeFile(path.join(dir, "config.yaml"), configYaml("embedded", 2, modelPath, null, 0));
  const first = await startCli(dir);
  const history: TurnFigure[] = [];
  for (let turn = 1; turn < turns; turn++) history.push(await chat(first, 1, turn));
  await first.stop();
  await cp(dir, coldDir, { recursive: true });
  await writeFile(path.join(coldDir, "config.yaml"), configYaml("embedded", 2, modelPath, null, 0, 0));
  if (history.length === 0) throw new Error("BENCH_KV_TURNS must be at least 2 for the restart scenario");
  const measured: Partial<Record<"restored" | "cold", TurnFigure>> = {};
  // Alternate which of the two runs first, so neither always gets the warmer page cache.
  const order: Array<"restored" | "cold"> = restartRound++ % 2 === 0 ? ["restored", "cold"] : ["cold", "restored"];
  for (const kind of order) {
    const cli = await startCli(kind === "restored" ? dir : coldDir);
    measured[kind] = await chat(cli, 1, turns);
    await cli.stop();
  }
  await Promise.all([rm(dir, { recursive: true, force: true }), rm(coldDir, { recursive: true, force: true })]);
  const { restored, cold } = measured;
  if (restored === undefined || cold === undefined) throw new Error("a restart run measured nothing");
  return { firstTurn: history[0] as TurnFigure, previous: history.at(-1) as TurnFigure, restored, cold };
}
let restartRound = 0;

/** node-llama-cpp alone, per turn (the floor scenario), when it ran: ms to first token with the earlier turns cached. */
let floorMs: number[] | null = null;

function report(name: string, figures: TurnFigure[], sessions: number): { row: string; ratios: BenchRatio[] } {
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
  const value = ttft(last) / ttft(1);
  out(`TTFT turn ${last} / turn 1 = ${value.toFixed(2)}x (target <= 1.5x); cached / reusable prompt, median over turns 2+: ${median(reuse).toFixed(3)}`);
  const ratios = [ratio(`${name}, ${sessions} sessions: TTFT turn ${last} / turn 1`, value, { atMost: 1.5 }), ratio(`${name}, ${sessions} sessions: cached / reusable prompt`, median(reuse))];
  const floor = floorMs?.[last - 1];
  if (floor !== undefined) {
    out(`TTFT turn ${last}, this / node-llama-cpp alone with the same turns cached = ${(ttft(last) / floor).toFixed(2)}x`);
    ratios.push(ratio(`${name}, ${sessions} sessions: TTFT turn ${last} / the floor's turn ${last}`, ttft(last) / floor));
  }
  return { row: `| ${name} | ${sessions} | ${value.toFixed(2)}x | ${median(reuse).toFixed(3)} |`, ratios };
}

function reportRestart(figures: RestartFigure[]): { row: string; ratios: BenchRatio[] } {
  const restored = median(figures.map((f) => f.restored.ttftMs));
  const cold = median(figures.map((f) => f.cold.ttftMs));
  const reuse = median(figures.map((f) => f.restored.cached / Math.max(1, f.previous.input + f.previous.output)));
  const coldReuse = median(figures.map((f) => f.cold.cached / Math.max(1, f.previous.input + f.previous.output)));
  out(`\nrestored after restart (embedded): turn ${turns} of one session in a fresh process, ${figures.length} rounds (medians)`);
  out("run | TTFT ms | input tokens | cached");
  out(`restored from <data_dir>/kv-cache | ${restored.toFixed(1)} | ${median(figures.map((f) => f.restored.input))} | ${median(figures.map((f) => f.restored.cached))}`);
  out(`cold (kv_cache_disk_bytes: 0)     | ${cold.toFixed(1)} | ${median(figures.map((f) => f.cold.input))} | ${median(figures.map((f) => f.cold.cached))}`);
  const firstTurn = median(figures.map((f) => f.firstTurn.ttftMs));
  out(`turn 1 of the first process        | ${firstTurn.toFixed(1)} | ${median(figures.map((f) => f.firstTurn.input))} | 0`);
  out(`TTFT restored / cold = ${(restored / cold).toFixed(2)}x; restored turn ${turns} / turn 1 = ${(restored / firstTurn).toFixed(2)}x (target <= 1.5x, both a fresh process's first chat); cached / reusable prompt: restored ${reuse.toFixed(3)}, cold ${coldReuse.toFixed(3)}`);
  return {
    row: `| embedded, restored after restart | 1 | ${(restored / firstTurn).toFixed(2)}x (restored / cold: ${(restored / cold).toFixed(2)}x) | ${reuse.toFixed(3)} |`,
    ratios: [
      ratio(`embedded, restored after restart: TTFT turn ${turns} restored / turn 1`, restored / firstTurn, { atMost: 1.5 }),
      ratio(`embedded, restored after restart: TTFT turn ${turns} restored / the same turn cold`, restored / cold, { atMost: 1 }),
      ratio("embedded, restored after restart: cached / reusable prompt", reuse),
    ],
  };
}

const modelPath = modelKind === "tiny" ? await ensureFixture("tiny", { seed: 3 }) : await ensureFixture("bench", { shape: "small" });
const binary = findLlamaServerBinary();
out(`bench:kv  model: ${modelKind} ${modelPath}  llama-server: ${binary ?? "not built (skipped)"}`);
const results: Array<{ row: string; ratios: BenchRatio[] }> = [];
if (scenarios.has("floor")) {
  // The same new text per turn as session 1 sends, on node-llama-cpp alone with the earlier turns cached.
  const floor = await measureKvFloor(modelPath, Array.from({ length: turns }, (_, index) => filler(100 + index + 1, words)), { ctx: 4096, threads: 1, rounds: 3 });
  out(`\nfloor: node-llama-cpp alone, one sequence, each turn's new text evaluated after the earlier turns (cached), 3 rounds`);
  out("turn | median ms to first token | cached tokens | new tokens");
  for (const row of floor.turns) out(`${String(row.turn).padStart(4)} | ${row.ms.toFixed(1).padStart(24)} | ${String(row.cachedTokens).padStart(13)} | ${row.newTokens}`);
  floorMs = floor.turns.map((row) => row.ms);
  const fifth = floor.turns[Math.min(4, floor.turns.length - 1)];
  const value = (fifth?.ms ?? Number.NaN) / (floor.turns[0]?.ms ?? Number.NaN);
  out(`floor TTFT turn ${fifth?.turn} / turn 1 = ${value.toFixed(2)}x: what perfect reuse costs on this model (attention over a longer context)`);
  results.push({ row: `| node-llama-cpp alone (the floor) | 1 | ${value.toFixed(2)}x | 1 (by construction) |`, ratios: [ratio(`floor, node-llama-cpp alone: TTFT turn ${fifth?.turn} / turn 1 with the earlier turns cached`, value)] });
}
for (const engine of ["embedded", "llama-server"] as const) {
  if (!scenarios.has("turns") || !engines.has(engine) || (engine === "llama-server" && binary === null)) continue;
  for (const sessions of [2, 4]) results.push(report(engine, await runScenario(engine, sessions, modelPath, binary), sessions));
}
if (scenarios.has("restart")) {
  const restarts: RestartFigure[] = [];
  for (let round = 0; round < restartRounds; round++) restarts.push(await runRestart(modelPath));
  results.push(reportRestart(restarts));
}
out("\n| engine | sessions | TTFT turn 5 / turn 1 | cached / reusable |");
out("| --- | --- | --- | --- |");
for (const { row } of results) out(row);
reportRatios("kv", results.flatMap((result) => result.ratios));
