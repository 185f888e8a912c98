// A separate Node process that hosts a LlamaServerEngine, so a test can SIGKILL "our own
// process" (or let it exit without close()) and check that its llama-server goes with it.
//
// Run as a script (compiled): node dist/test/helpers/llama-server-process.js '<json HostConfig>'
// It warms the engine up, prints one JSON line {"childPid": N} on stdout, then idles until killed.
// Imported: startEngineHost() runs it and resolves once it reported ready.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import type { ModelConfig } from "../../src/config/schema.js";
import { killChildrenOnExit } from "../../src/app/runtime/child-exit-hook.js";
import { HelpProbe } from "../../src/engine/llama-server/help-probe.js";
import { LlamaServerEngine } from "../../src/engine/llama-server/llama-server-engine.js";
import { ChildRegistry } from "../../src/shared/process/child-registry.js";

export interface HostConfig {
  binary: string;
  modelPath: string;
  modelName: string;
  port: number;
  dataDir: string;
  /** After ready: "idle" until killed (default), or "exit": process.exit(0) without close(). */
  then?: "idle" | "exit";
}

export function llamaModelConfig(path: string, port: number, overrides: Partial<ModelConfig> = {}): ModelConfig {
  return {
    engine: "llama-server",
    path,
    download: "never",
    idle_unload_s: null,
    pin: false,
    port,
    ctx_size: 512,
    gpu_layers: 0,
    threads: 1,
    parallel: 1,
    kv_cache_disk_bytes: 0,
    rerank: false,
    extra_args: [],
    base_url: null,
    affinity_header: null,
    api_key: null,
    model: null,
    ...overrides,
  };
}

async function main(raw: string): Promise<void> {
  const config = JSON.parse(raw) as HostConfig;
  const logger = pino({ level: "warn" }, pino.destination(2));
  // As the composition root does: one registry for the process, its exit hook installed.
  const children = new ChildRegistry();
  killChildrenOnExit(children);
  const engine = new LlamaServerEngine(config.modelName, llamaModelConfig(config.modelPath, config.port), {
    binary: config.binary,
    dataDir: config.dataDir,
    logger,
    threads: 1,
    gpuLayers: 0,
    parallel: 1,
    children,
    helpProbe: new HelpProbe(),
  });
  await engine.warmUp();
  process.stdout.write(`${JSON.stringify({ childPid: engine.health().info?.["pid"] })}\n`, () => {
    // "exit": leave without close(); the app's 'exit' hook (and the watchdog) must stop the child.
    if (config.then === "exit") process.exit(0);
  });
  // Stay alive until the test kills us (SIGKILL: nothing of ours gets to run).
  if (config.then !== "exit") setInterval(() => undefined, 60_000);
}

export interface EngineHost {
  process: ChildProcess;
  childPid: number;
}

/** Starts the host script and waits for its ready line. */
export function startEngineHost(config: HostConfig, timeoutMs = 20_000): Promise<EngineHost> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [script, JSON.stringify(config)], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("engine host did not report ready in time"));
    }, timeoutMs);
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => {
      clearTimeout(timer);
      const parsed = JSON.parse(line) as { childPid?: unknown };
      if (typeof parsed.childPid !== "number") reject(new Error(`engine host sent ${line}`));
      else resolve({ process: child, childPid: parsed.childPid });
    });
    // stdout closing before a line (not the exit event, which may overtake the last data) = failure.
    lines.once("close", () => {
      clearTimeout(timer);
      reject(new Error(`engine host ended without reporting ready (exit code ${child.exitCode}, signal ${child.signalCode})`));
    });
  });
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && fileURLToPath(import.meta.url) === invokedPath) {
  main(process.argv[2] ?? "{}").catch((error: unknown) => {
    process.stderr.write(`engine host failed: ${String(error)}\n`);
    process.exit(1);
  });
}
