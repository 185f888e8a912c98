import { pino, type Logger } from "pino";
import type { Config } from "../config/schema.js";
import { downloadSettingsOf } from "../models/download-settings.js";
import { lazyLlama, type LlamaLoader } from "../engine/llama/llama-loader.js";
import { driverOf } from "../engine/drivers/engine-drivers.js";
import { fail } from "./check-result.js";
import { checkConfig } from "./checks/config.js";
import { checkDataDir } from "./checks/data-dir.js";
import { checkStoreNames } from "./checks/store-names.js";
import { checkEmbeddedBinary } from "./checks/embedded-binary.js";
import { checkGpu } from "./checks/gpu.js";
import { checkLlamaServerBinary } from "./checks/llama-server-binary.js";
import { checkLoadedModels } from "./checks/loaded-models.js";
import { checkModelInsights } from "./checks/model-insights.js";
import { checkModels } from "./checks/models.js";
import { checkPorts } from "./checks/ports.js";
import { checkStaleLlamaServers } from "./checks/stale-llama-server.js";
import { checkSystem, probeWithRamState, readSystemProbe } from "./checks/system.js";
import { checkToolSchemas } from "./checks/tool-schemas.js";
import type { CheckResult, CheckStatus, DoctorContext, DoctorReport } from "./doctor-report.js";

/**
 * The outer bound of any single check. Checks bound their own waits (2 s HTTP, 5 s --version);
 * this catches whatever they miss — a hung NFS mount, a child that keeps its pipes open — so a
 * doctor run always finishes.
 */
export const CHECK_TIMEOUT_MS = 10_000;
/**
 * The MCP check starts every configured server, which a first `npx -y` may download: it gets
 * longer, and each server's start is bounded a little below it so a slow one is reported by name.
 */
export const MCP_CHECK_TIMEOUT_MS = 30_000;
const MCP_START_TIMEOUT_MS = 25_000;

interface PlannedCheck {
  /** Used for the result when the check throws or times out instead of answering. */
  id: string;
  title: string;
  /** What is likely stuck when the check times out, for the fix line. */
  stuck: string;
  /** Its own bound, where CHECK_TIMEOUT_MS is too short for what it must do. */
  timeoutMs?: number;
  /** Runs after the concurrent checks (its bound starts then). */
  late?: boolean;
  run(signal: AbortSignal): Promise<CheckResult | CheckResult[]>;
}

export interface RunDoctorOptions {
  checkTimeoutMs?: number;
  /** A node-llama-cpp the caller already has (a runtime's); otherwise one is loaded for this run and disposed. */
  llama?: LlamaLoader;
  /** Where node-llama-cpp's own log lines go; stderr without one. */
  logger?: Logger;
}

/** How long a finished run waits for its own node-llama-cpp to be disposed before returning anyway. */
const LLAMA_DISPOSE_WAIT_MS = 1000;

/**
 * Runs every check concurrently (the MCP check after them); the report keeps a stable order
 * (system, GPU, config, files, embedded binary, model plans, llama-server binary, processes, ports,
 * MCP). The GPU, embedded binary and model plan checks share one lazily loaded node-llama-cpp
 * (about a second to load); the other checks never touch it.
 */
export async function runDoctor(context: DoctorContext, options: RunDoctorOptions = {}): Promise<DoctorReport> {
  const timeoutMs = options.checkTimeoutMs ?? CHECK_TIMEOUT_MS;
  const binary = context.configState.status === "loaded" ? context.configState.config.llama.embedded_binary : "auto";
  const llama = lazyLlama({ ...(options.llama ? { loader: options.llama } : {}), ...(options.logger ? { logger: options.logger } : {}), binary });
  let results: CheckResult[][];
  try {
    const logger = options.logger ?? pino({ level: "silent" });
    const planned = planChecks(context, llama.get, logger);
    const run = (check: PlannedCheck): Promise<CheckResult[]> => runBounded(check, Math.max(timeoutMs, check.timeoutMs ?? 0), context.signal);
    // Late checks start when the others are done: they keep the main thread busy (rendering chat
    // templates) and would eat into the others' time bounds.
    const early = await Promise.all(planned.map((check) => (check.late === true ? Promise.resolve(null) : run(check))));
    results = [];
    for (const [index, check] of planned.entries()) results.push(early[index] ?? (await run(check)));
  } finally {
    // A load that hung (and timed out its check) must not hold the report back.
    await Promise.race([llama.dispose().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, LLAMA_DISPOSE_WAIT_MS).unref())]);
  }
  context.signal?.throwIfAborted();
  const checks = results.flat();
  const summary: Record<CheckStatus, number> = { ok: 0, warn: 0, fail: 0 };
  for (const check of checks) summary[check.status] += 1;
  return { ok: summary.fail === 0, summary, checks, version: context.version, generated_at: new Date().toISOString() };
}

function planChecks(context: DoctorContext, llama: LlamaLoader, logger: Logger): PlannedCheck[] {
  const { configState, env } = context;
  const planned: PlannedCheck[] = [
    { id: "system", title: "System", stuck: "the operating system did not answer a basic query", run: async () => checkSystem(await probeWithRamState(readSystemProbe(), async () => (await llama()).llama.getRamState())) },
    { id: "gpu", title: "GPU", stuck: "node-llama-cpp did not finish loading (a GPU driver that hangs?)", run: () => checkGpu(llama) },
    { id: "config", title: "Config", stuck: "nothing expected (this check does no I/O; please report it)", run: () => checkConfig(configState) },
  ];
  // Without a valid config there is nothing to check the files and ports against; the config
  // check already says why, and guessing defaults would report on a setup the user does not have.
  const loadedModels = context.loadedModels;
  if (loadedModels !== undefined) {
    planned.push({ id: "models.loaded", title: "Loaded models", stuck: "nothing expected (this check does no I/O; please report it)", run: async () => checkLoadedModels(loadedModels(), context.memoryUse?.()) });
  }
  if (configState.status !== "loaded") return planned;
  const config: Config = configState.config;
  const settings = downloadSettingsOf(config, env);
  return [
    ...planned,
    { id: "data_dir", title: "Data directory", stuck: "the disk holding app.data_dir does not answer (a hung network mount?)", run: () => checkDataDir(config.app.data_dir) },
    { id: "store_names", title: "Store names", stuck: "the disk holding app.data_dir does not answer (a hung network mount?)", run: () => checkStoreNames(config.app.data_dir) },
    { id: "models", title: "Models", stuck: "a model file's disk or an openai base_url does not answer", run: (signal) => checkModels(config, { settings, signal }) },
    ...(Object.values(config.llama.models).some((model) => driverOf(model).doctorChecks.includes("embedded_binary"))
      ? [{ id: "embedded.binary", title: "Embedded binary", stuck: "node-llama-cpp did not finish loading", run: () => checkEmbeddedBinary(llama, config.llama.embedded_binary) }]
      : []),
    { id: "model_plans", title: "Model plans", stuck: "node-llama-cpp did not finish loading or reading a model's metadata", run: (signal) => checkModelInsights(config, { llama, env, settings, signal }) },
    {
      id: "mcp",
      title: "MCP servers and tool schemas",
      stuck: "an MCP server did not start or list its tools",
      timeoutMs: MCP_CHECK_TIMEOUT_MS,
      late: true,
      run: (signal) => checkToolSchemas(config, { llama, env, logger, signal, startTimeoutMs: MCP_START_TIMEOUT_MS }),
    },
    { id: "llama_server.binary", title: "llama-server binary", stuck: "llama.binary hangs when run with --version", run: (signal) => checkLlamaServerBinary(config, { env, signal }) },
    { id: "llama_server.processes", title: "llama-server processes", stuck: "reading /proc did not finish", run: () => checkStaleLlamaServers(config) },
    { id: "ports", title: "Ports", stuck: "the network stack did not answer a listen", run: () => checkPorts(config) },
  ];
}

async function runBounded(check: PlannedCheck, timeoutMs: number, outer: AbortSignal | undefined): Promise<CheckResult[]> {
  const controller = new AbortController();
  const onOuterAbort = (): void => controller.abort(outer?.reason);
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckResult[]>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`check ${check.id} timed out`));
      resolve([
        fail(check.id, check.title, `the check did not finish within ${timeoutMs / 1000} s`, `likely cause: ${check.stuck}; fix that and run \`local-ai doctor\` again`),
      ]);
    }, timeoutMs);
    timer.unref();
  });
  const running = (async (): Promise<CheckResult[]> => {
    try {
      const result = await check.run(controller.signal);
      return Array.isArray(result) ? result : [result];
    } catch (error) {
      // A check that throws is a bug in the check, but the user still gets a report.
      const message = error instanceof Error ? error.message : String(error);
      return [fail(check.id, check.title, `the check itself failed: ${message}`, "report this as a bug in local-ai doctor, with the message above")];
    }
  })();
  try {
    return await Promise.race([running, timedOut]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuterAbort);
  }
}
