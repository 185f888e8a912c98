// The llama-server engine against a real llama-server binary and real GGUF fixtures. Skips
// loudly when the binary has not been built (npm run build:llama-server); never fakes it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFile, mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import type { EngineChunk, GenerateRequest } from "../../src/engine/chat-types.js";
import type { EngineState } from "../../src/engine/engine.js";
import { HelpProbe } from "../../src/engine/llama-server/help-probe.js";
import { LlamaServerEngine, type LlamaServerEngineDeps } from "../../src/engine/llama-server/llama-server-engine.js";
import { pidFilePath, readPidFile, writePidFile } from "../../src/engine/llama-server/pid-file.js";
import { ChildRegistry } from "../../src/shared/process/child-registry.js";
import { isProcessAlive } from "../../src/shared/process/is-process-alive.js";
import { waitForProcessExit } from "../../src/shared/process/wait-for-exit.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { llamaModelConfig, startEngineHost } from "../helpers/llama-server-process.js";
import { watchdogsOf } from "../helpers/llama-server-procs.js";
import { collect } from "../helpers/collect.js";

const binary = findLlamaServerBinary();
const SKIP = "llama-server not built: run npm run build:llama-server";

let dataDir = "";
let tinyPath = "";
let demoPath = "";
let demoToolsPath = "";
const engines: LlamaServerEngine[] = [];
/** What the composition root would hand every engine of this process. */
const children = new ChildRegistry();
const helpProbe = new HelpProbe();
/** Measurements reported at the end (ms). */
const timings: Record<string, number> = {};

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function makeEngine(
  name: string,
  modelPath: string,
  options: { port?: number; ctx?: number; deps?: Partial<LlamaServerEngineDeps> } = {},
): Promise<LlamaServerEngine> {
  const port = options.port ?? (await freePort());
  const engine = new LlamaServerEngine(name, llamaModelConfig(modelPath, port, { ctx_size: options.ctx ?? 2048 }), {
    binary: binary!,
    dataDir,
    logger: captureLogger().logger,
    threads: 1,
    gpuLayers: 0,
    parallel: 1,
    children,
    helpProbe,
    ...options.deps,
  });
  engines.push(engine);
  return engine;
}

const ask = (content: string, extra: Partial<GenerateRequest> = {}): GenerateRequest => ({
  messages: [{ role: "user", content }],
  temperature: 0,
  maxTokens: 64,
  ...extra,
});

const textOf = (chunks: EngineChunk[]): string => chunks.map((c) => (c.type === "text" ? c.delta : "")).join("");
const childPid = (engine: LlamaServerEngine): number => engine.health().info?.["pid"] as number;

function skipIfMissing(t: TestContext): boolean {
  if (binary !== null) return false;
  t.skip(SKIP);
  return true;
}

before(async () => {
  if (binary === null) {
    process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
    return;
  }
  dataDir = await mkdtemp(path.join(tmpdir(), "llama-server-e2e-"));
  [tinyPath, demoPath, demoToolsPath] = await Promise.all([ensureFixture("tiny"), ensureFixture("demo"), ensureFixture("demo", { toolMode: true })]);
});

after(async () => {
  await Promise.allSettled(engines.map((engine) => engine.close()));
  if (dataDir !== "") await rm(dataDir, { recursive: true, force: true });
  if (Object.keys(timings).length > 0) process.stderr.write(`llama-server e2e timings (ms): ${JSON.stringify(timings)}\n`);
});

describe("llama-server engine (real binary)", { concurrency: false }, () => {
  test("the --help probe of the real binary finds the flags we pass, once per binary", async (t) => {
    if (skipIfMissing(t)) return;
    const probe = new HelpProbe();
    const flags = await probe.supportedFlags(binary!);
    for (const flag of ["-m", "--host", "--port", "-c", "-ngl", "--parallel", "-t", "--api-key", "--api-key-file", "--jinja", "--slots", "--no-webui", "-b"]) {
      assert.ok(flags.has(flag), flag);
    }
    assert.equal(await probe.supportedFlags(binary!), flags, "cached by path + mtime");
  });

  test("readiness: starting -> ready, concurrent warmUps share one start, DEMO_SENTENCE streams, close leaves no orphan", async (t) => {
    if (skipIfMissing(t)) return;
    const engine = await makeEngine("demo", demoPath);
    assert.equal(engine.health().state, "stopped");
    const seen = new Set<EngineState>();
    const started = Date.now();
    const first = engine.warmUp();
    seen.add(engine.health().state);
    const second = engine.warmUp();
    while (engine.health().state === "starting") await new Promise((resolve) => setTimeout(resolve, 5));
    await Promise.all([first, second]);
    timings["warmUp_to_ready"] = Date.now() - started;
    timings["spawn_to_ready"] = engine.health().info?.["startup_ms"] as number;
    seen.add(engine.health().state);
    assert.deepEqual([...seen], ["starting", "ready"]);
    const health = engine.health();
    assert.equal(health.degradationTier, "NORMAL");
    assert.equal(health.circuit, "closed");
    const pid = childPid(engine);
    // The key is off the command line (readable by every local user) and its file is gone once ready.
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
    assert.ok(cmdline.includes("--api-key-file") && !cmdline.includes("--api-key"), cmdline.join(" "));
    assert.deepEqual((await readdir(path.dirname(pidFilePath(dataDir, "demo")))).filter((name) => name.endsWith(".key")), []);
    await engine.warmUp(); // idempotent: same child
    assert.equal(childPid(engine), pid);

    const chunks = await collect(engine.generate(ask("hi")));
    assert.equal(textOf(chunks), DEMO_SENTENCE);
    assert.deepEqual(chunks.at(-1), { type: "end", finishReason: "stop" });

    const pidFile = pidFilePath(dataDir, "demo");
    assert.equal((await readPidFile(pidFile))?.pid, pid);
    const closing = Date.now();
    await engine.close();
    timings["close"] = Date.now() - closing;
    assert.equal(isProcessAlive(pid), false, "no orphan after close()");
    assert.equal(await readPidFile(pidFile), null, "pid file removed on clean stop");
    assert.equal(engine.health().state, "stopped");
    await assert.rejects(engine.warmUp(), { code: "shutting_down" });
  });

  test("abort mid-stream: no chunks after the abort, cancelled, the slot is freed, the next generation works", async (t) => {
    if (skipIfMissing(t)) return;
    const engine = await makeEngine("tiny-abort", tinyPath);
    await engine.warmUp();
    const controller = new AbortController();
    const afterAbort: EngineChunk[] = [];
    let texts = 0;
    let abortedAt = 0;
    await assert.rejects(
      (async () => {
        for await (const chunk of engine.generate(ask("tell me a story", { maxTokens: 1900, signal: controller.signal }))) {
          if (abortedAt !== 0) afterAbort.push(chunk);
          if (chunk.type === "text" && ++texts === 5) {
            abortedAt = Date.now();
            controller.abort();
          }
        }
      })(),
      (error: unknown) => error instanceof RuntimeError && error.code === "cancelled",
    );
    timings["abort_to_throw"] = Date.now() - abortedAt;
    assert.deepEqual(afterAbort, []);
    let slots = await engine.slots();
    const freeBy = Date.now() + 1000;
    while (slots?.some((slot) => slot.processing) === true && Date.now() < freeBy) slots = await engine.slots();
    timings["abort_to_slot_idle"] = Date.now() - abortedAt;
    assert.ok(slots !== null && slots.length === 1 && !slots[0]!.processing, `slot idle: ${JSON.stringify(slots)}`);
    const pid = childPid(engine);
    const next = await collect(engine.generate(ask("again", { maxTokens: 8 })));
    assert.deepEqual(next.at(-1), { type: "end", finishReason: "length" });
    assert.equal(childPid(engine), pid, "no restart was needed");
    assert.equal(engine.health().info?.["restarts"], 0);
  });

  test("a tool call through the demo tool model", async (t) => {
    if (skipIfMissing(t)) return;
    const engine = await makeEngine("demo-tools", demoToolsPath);
    const chunks = await collect(
      engine.generate(ask("/echo", { tools: [{ name: "echo", description: "Echoes text", parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] } }] })),
    );
    const call = chunks.find((chunk) => chunk.type === "tool_call");
    assert.ok(call?.type === "tool_call", JSON.stringify(chunks));
    assert.equal(call.call.name, "echo");
    assert.deepEqual(JSON.parse(call.call.arguments), { message: "hi" });
    assert.deepEqual(chunks.at(-1), { type: "end", finishReason: "tool_calls" });
  });

  test("crash: SIGKILL mid-generation fails that generation, the supervisor restarts, the next works", async (t) => {
    if (skipIfMissing(t)) return;
    const { logger, records } = captureLogger();
    const engine = await makeEngine("tiny-crash", tinyPath, { deps: { logger } });
    await engine.warmUp();
    const pid = childPid(engine);
    const watchdogs = await watchdogsOf(pid);
    assert.equal(watchdogs.length, 1, "one watchdog in the server's group");
    let killedAt = 0;
    await assert.rejects(
      (async () => {
        for await (const chunk of engine.generate(ask("go", { maxTokens: 1900 }))) {
          if (chunk.type === "text" && killedAt === 0) {
            killedAt = Date.now();
            process.kill(pid, "SIGKILL");
          }
        }
      })(),
      (error: unknown) => {
        assert.ok(error instanceof RuntimeError);
        assert.equal(error.code, "engine_unavailable");
        assert.match(error.message, /was killed by SIGKILL during generation; it is being restarted/);
        return true;
      },
    );
    timings["kill_to_generation_error"] = Date.now() - killedAt;
    const chunks = await collect(engine.generate(ask("hello", { maxTokens: 4 })));
    timings["kill_to_next_generation_done"] = Date.now() - killedAt;
    assert.deepEqual(chunks.at(-1), { type: "end", finishReason: "length" });
    const health = engine.health();
    assert.equal(health.state, "ready");
    assert.equal(health.info?.["restarts"], 1);
    assert.notEqual(childPid(engine), pid);
    assert.equal(isProcessAlive(pid), false);
    assert.ok(await waitForProcessExit(watchdogs[0]!, 10_000), "the dead server's watchdog ended with it");
    // Child output is drained into our logger at debug, tagged with the component and model.
    assert.ok(records().some((r) => r["component"] === "llama-server" && r["model"] === "tiny-crash" && r["stream"] !== undefined && r["level"] === 20));
  });

  test("a hung server (SIGSTOP) fails its health checks, is stopped (TERM, then KILL) and restarted", async (t) => {
    if (skipIfMissing(t)) return;
    const engine = await makeEngine("tiny-hung", tinyPath, {
      deps: { tuning: { healthIntervalMs: 100, healthTimeoutMs: 200, healthFailuresBeforeRestart: 3, stopGraceMs: 300 } },
    });
    await engine.warmUp();
    const pid = childPid(engine);
    const stoppedAt = Date.now();
    process.kill(pid, "SIGSTOP");
    const by = Date.now() + 10_000;
    while (!(engine.health().state === "ready" && childPid(engine) !== pid)) {
      assert.ok(Date.now() < by, `restarted: ${JSON.stringify(engine.health())}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    timings["hang_to_restarted"] = Date.now() - stoppedAt;
    assert.equal(isProcessAlive(pid), false, "the stopped child was killed (TERM cannot reach a stopped process)");
    assert.deepEqual(engine.health().info?.["last_exit"] !== null, true);
    assert.equal((engine.health().info?.["last_exit"] as { signal: string }).signal, "SIGKILL");
    const chunks = await collect(engine.generate(ask("hi", { maxTokens: 2 })));
    assert.equal(chunks.at(-1)?.type, "end");
  });

  test("circuit: a model that makes the child exit at once opens the breaker, fails fast, recovers after the cool-down", async (t) => {
    if (skipIfMissing(t)) return;
    const broken = path.join(dataDir, "broken.gguf");
    await writeFile(broken, Buffer.alloc(4096, 7));
    const cooldownMs = 1500;
    const engine = await makeEngine("broken", broken, {
      ctx: 2048,
      deps: { tuning: { breaker: { failureThreshold: 3, windowMs: 60_000, cooldownMs }, backoff: { initialMs: 50, factor: 2, maxMs: 200, jitter: 0 } } },
    });
    const started = Date.now();
    await assert.rejects(engine.warmUp(), (error: unknown) => {
      assert.ok(error instanceof RuntimeError);
      assert.equal(error.code, "engine_unavailable");
      assert.match(error.message, /circuit open/);
      assert.match(error.message, /failed to load model/, "the child's own words are quoted");
      return true;
    });
    timings["three_failed_starts_to_open"] = Date.now() - started;
    const health = engine.health();
    assert.equal(health.state, "down");
    assert.equal(health.circuit, "open");
    assert.equal(health.degradationTier, "REDUCED_CONTEXT", "two failed starts stepped down a tier");
    assert.equal(health.info?.["ctx_size"], 1024);

    const fastStart = Date.now();
    await assert.rejects(collect(engine.generate(ask("hi"))), (error: unknown) => error instanceof RuntimeError && error.code === "engine_unavailable" && /failed to load model/.test(error.message));
    const fastMs = Date.now() - fastStart;
    assert.ok(fastMs < 100, `fails fast while open (${fastMs} ms)`);
    timings["open_circuit_fail_fast"] = fastMs;

    await copyFile(tinyPath, broken); // fixed; the probe after the cool-down succeeds
    await new Promise((resolve) => setTimeout(resolve, cooldownMs + 50));
    assert.equal(engine.health().circuit, "half_open");
    const chunks = await collect(engine.generate(ask("hi", { maxTokens: 4 })));
    assert.deepEqual(chunks.at(-1), { type: "end", finishReason: "length" });
    const recovered = engine.health();
    assert.equal(recovered.circuit, "closed");
    assert.equal(recovered.state, "degraded", "still serving on the lower tier, and saying so");
    assert.equal(recovered.degradationTier, "REDUCED_CONTEXT");
  });

  test("port held by another process: clear error naming the port and the config key, nothing spawned", async (t) => {
    if (skipIfMissing(t)) return;
    const port = await freePort();
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, "127.0.0.1", resolve));
    try {
      const engine = await makeEngine("squatted", tinyPath, { port });
      await assert.rejects(engine.warmUp(), (error: unknown) => {
        assert.ok(error instanceof RuntimeError);
        assert.equal(error.code, "engine_unavailable");
        assert.match(error.message, new RegExp(`Port ${port} \\(llama\\.models\\.squatted\\.port\\) is already in use`));
        return true;
      });
      assert.equal(engine.health().state, "down");
      assert.equal(engine.health().info?.["pid"], null);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  test("a stale pid file naming a real orphaned llama-server is reaped on start", async (t) => {
    if (skipIfMissing(t)) return;
    const port = await freePort();
    const orphan = spawn(binary!, ["-m", tinyPath, "--host", "127.0.0.1", "--port", String(port), "-c", "512", "-t", "1"], { detached: true, stdio: "ignore" });
    orphan.unref();
    const orphanPid = orphan.pid!;
    const upBy = Date.now() + 10_000;
    while ((await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.status, () => 0)) !== 200) {
      assert.ok(Date.now() < upBy, "orphan came up");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // The owner recorded in the file is a process that has exited (as after a crash of ours).
    const gone = spawn("true");
    await new Promise((resolve) => gone.once("exit", resolve));
    await writePidFile(pidFilePath(dataDir, "reaped"), { pid: orphanPid, port, binary: binary!, model: "reaped", startedAt: new Date().toISOString(), ownerPid: gone.pid! });
    const engine = await makeEngine("reaped", tinyPath, { port });
    await engine.warmUp();
    assert.equal(isProcessAlive(orphanPid), false, "the orphan is gone");
    assert.equal(engine.health().info?.["reaped_orphan_pid"], orphanPid);
    assert.notEqual(childPid(engine), orphanPid);
    await engine.close();
  });

  test("no orphan after SIGKILL of our own process: the watchdog kills the server, the next start clears the stale pid file", async (t) => {
    if (skipIfMissing(t)) return;
    const port = await freePort();
    const host = await startEngineHost({ binary: binary!, modelPath: tinyPath, modelName: "host", port, dataDir });
    const watchdogs = await watchdogsOf(host.childPid);
    assert.equal(watchdogs.length, 1, "the server runs with its watchdog in its group");
    const hostExit = new Promise((resolve) => host.process.once("exit", resolve));
    host.process.kill("SIGKILL");
    await hostExit;
    // Generous: it only catches a server that outlives its parent (the kill takes milliseconds).
    assert.ok(await waitForProcessExit(host.childPid, 10_000), "the server died with its parent");
    assert.ok(await waitForProcessExit(watchdogs[0]!, 10_000), "and so did its watchdog");
    const pidFile = await readPidFile(pidFilePath(dataDir, "host"));
    assert.equal(pidFile?.pid, host.childPid, "SIGKILL left the pid file behind");

    const engine = await makeEngine("host", tinyPath, { port });
    const started = Date.now();
    await engine.warmUp();
    timings["restart_after_parent_sigkill"] = Date.now() - started;
    assert.equal(engine.health().info?.["reaped_orphan_pid"], null, "nothing was left to reap");
    const chunks = await collect(engine.generate(ask("hi", { maxTokens: 2 })));
    assert.equal(chunks.at(-1)?.type, "end");
    const pid = childPid(engine);
    await engine.close();
    assert.equal(isProcessAlive(pid), false);
    await assert.rejects(stat(pidFilePath(dataDir, "host")), { code: "ENOENT" });
  });

  test("no orphan when our process exits without close(): the exit hook kills the group", async (t) => {
    if (skipIfMissing(t)) return;
    const port = await freePort();
    const host = await startEngineHost({ binary: binary!, modelPath: tinyPath, modelName: "exiting", port, dataDir, then: "exit" });
    assert.ok(await waitForProcessExit(host.childPid, 10_000), "the child died with its parent");
  });
});
