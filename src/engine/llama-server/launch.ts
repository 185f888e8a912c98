// One launch attempt: preflight, port claim, spawn, pid file, readiness. Either it returns a
// ready server, or it throws a RuntimeError carrying the child's last log lines and leaves
// nothing running (the child it spawned is stopped and its pid file removed).
import { randomBytes } from "node:crypto";
import { stat } from "node:fs/promises";
import { checkGgufFile } from "../gguf/check-gguf-file.js";
import { findExecutable } from "../../shared/process/find-executable.js";
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError, toRuntimeError } from "../../shared/runtime-error.js";
import type { LoadProgress } from "../engine.js";
import type { DegradationTier, LaunchShape } from "./degradation.js";
import type { HelpProbe } from "./help-probe.js";
import type { ChildRegistry } from "../../shared/process/child-registry.js";
import { LogTail } from "../../shared/process/log-tail.js";
import { errorExcerpt } from "./error-excerpt.js";
import { removeApiKeyFile, writeApiKeyFile } from "./api-key-file.js";
import { removePidFile, writePidFile } from "./pid-file.js";
import { claimPort } from "./port-claim.js";
import { StartupExit, waitForReady } from "./readiness.js";
import { buildServerArgs, LLAMA_SERVER_HOST, managedFlagsIn } from "./server-args.js";
import type { ServerEndpoint } from "./server-http.js";
import { ServerProcess } from "./server-process.js";

export interface LaunchPlan {
  modelName: string;
  binary: string;
  modelPath: string;
  port: number;
  threads: number;
  parallel: number;
  extraArgs: readonly string[];
  /** Launched with --reranking (llama.models.<name>.rerank). */
  rerank: boolean;
  pidFile: string;
  tier: DegradationTier;
  shape: LaunchShape;
  startupIdleTimeoutMs: number;
  maxStartupMs: number;
  stopGraceMs: number;
}

export interface LaunchHooks {
  logger: Logger;
  /** The supervisor-wide tail (doctor, health); each attempt also keeps its own for its error. */
  tail: LogTail;
  signal: AbortSignal;
  onProgress: (progress: LoadProgress) => void;
  /** Called once the child exists, so close() can stop it even mid-startup. */
  onSpawn: (child: ServerProcess) => void;
  /** The runtime's child registry and flag cache (src/app owns both). */
  children: ChildRegistry;
  helpProbe: HelpProbe;
}

export interface LaunchedServer {
  process: ServerProcess;
  endpoint: ServerEndpoint;
  tier: DegradationTier;
  shape: LaunchShape;
  /** Spawn to ready, ms. */
  startupMs: number;
  readyAt: number;
  /** An orphan of an earlier run that this launch reaped. */
  reapedPid: number | null;
}

/** Start errors that no retry can fix (config, missing files, a foreign process on the port). */
export function isConfigFailure(error: RuntimeError): boolean {
  return ["binary_missing", "model_missing", "config_invalid"].includes(error.code) || error.details?.["config_key"] !== undefined;
}

async function preflight(plan: LaunchPlan): Promise<string> {
  const key = `llama.models.${plan.modelName}`;
  const managed = managedFlagsIn(plan.extraArgs);
  if (managed.length > 0) {
    throw new RuntimeError("config_invalid", `${key}.extra_args must not set ${managed.join(", ")}: the engine sets them itself`, {
      details: { config_key: `${key}.extra_args` },
    });
  }
  // A bare name is looked up on PATH the way a spawn would; the pid file then records the full path.
  const lookup = await findExecutable(plan.binary, process.env);
  if (!lookup.found) {
    throw new RuntimeError("binary_missing", `llama-server binary not usable (llama.binary): ${lookup.reason}`, {
      details: { binary: plan.binary, config_key: "llama.binary" },
    });
  }
  try {
    if (!(await stat(plan.modelPath)).isFile()) throw new Error("not a regular file");
  } catch (error) {
    throw new RuntimeError("model_missing", `Model file ${plan.modelPath} (${key}.path) cannot be read: ${(error as Error).message}`, {
      cause: error,
      details: { path: plan.modelPath, config_key: `${key}.path` },
    });
  }
  // Bounded before llama-server reads it: a header that lies would have it read without end.
  await checkGgufFile(plan.modelPath);
  return lookup.path;
}

export async function launchServer(plan: LaunchPlan, hooks: LaunchHooks): Promise<LaunchedServer> {
  const { logger, signal } = hooks;
  hooks.onProgress({ phase: "starting" });
  const binary = await preflight(plan);
  const supportedFlags = await hooks.helpProbe.supportedFlags(binary, logger);
  const { reapedPid } = await claimPort({ modelName: plan.modelName, port: plan.port, pidFile: plan.pidFile, logger, graceMs: plan.stopGraceMs });
  signal.throwIfAborted();

  const apiKey = randomBytes(24).toString("base64url");
  const apiKeyFile = supportedFlags.has("--api-key-file") ? await writeApiKeyFile(plan.pidFile, apiKey) : undefined;
  const args = buildServerArgs({
    modelPath: plan.modelPath,
    port: plan.port,
    ctxSize: plan.shape.ctxSize,
    gpuLayers: plan.shape.gpuLayers,
    threads: plan.threads,
    parallel: plan.parallel,
    extraArgs: plan.extraArgs,
    rerank: plan.rerank,
    apiKey,
    ...(apiKeyFile === undefined ? {} : { apiKeyFile }),
    supportedFlags,
  });
  const attemptTail = new LogTail(60);
  let lastProgressAt = Date.now();
  const spawnedAt = Date.now();
  const child = await ServerProcess.spawn({
    binary,
    args,
    logger,
    tail: hooks.tail,
    children: hooks.children,
    onLine: (line) => {
      attemptTail.push(line);
      lastProgressAt = Date.now();
    },
  }).catch(async (error: unknown) => {
    await removeApiKeyFile(apiKeyFile);
    throw error;
  });
  hooks.onSpawn(child);
  const endpoint: ServerEndpoint = { origin: `http://${LLAMA_SERVER_HOST}:${plan.port}`, port: plan.port, apiKey };
  try {
    await writePidFile(plan.pidFile, {
      pid: child.pid,
      port: plan.port,
      binary,
      model: plan.modelName,
      startedAt: new Date(spawnedAt).toISOString(),
      ownerPid: process.pid,
    });
    await waitForReady(endpoint, {
      lastProgressAt: () => lastProgressAt,
      exited: child.exited,
      idleTimeoutMs: plan.startupIdleTimeoutMs,
      maxStartupMs: plan.maxStartupMs,
      signal,
      onPhase: (phase) => hooks.onProgress({ phase }),
    });
  } catch (error) {
    await child.stop(plan.stopGraceMs);
    await removePidFile(plan.pidFile, child.pid).catch(() => undefined);
    throw explainLaunchFailure(error, attemptTail, signal);
  } finally {
    // Read at startup: a ready (or dead) server no longer needs it on disk.
    await removeApiKeyFile(apiKeyFile).catch(() => undefined);
  }
  const readyAt = Date.now();
  logger.info({ child_pid: child.pid, port: plan.port, tier: plan.tier, ctx: plan.shape.ctxSize, ngl: plan.shape.gpuLayers, ms: readyAt - spawnedAt }, "llama-server ready");
  return { process: child, endpoint, tier: plan.tier, shape: plan.shape, startupMs: readyAt - spawnedAt, readyAt, reapedPid };
}

function explainLaunchFailure(error: unknown, attemptTail: LogTail, signal: AbortSignal): RuntimeError {
  if (signal.aborted) return new RuntimeError("cancelled", "llama-server start cancelled", { cause: error });
  const excerpt = errorExcerpt(attemptTail.lines());
  const details = { stderr_tail: excerpt };
  if (error instanceof StartupExit) {
    const suffix = excerpt.length > 0 ? `; last output: ${excerpt.join(" | ")}` : "";
    return new RuntimeError("engine_unavailable", `${error.message}${suffix}`, { cause: error, details: { ...details, exit_code: error.exit.code, exit_signal: error.exit.signal } });
  }
  const runtime = toRuntimeError(error);
  if (runtime.code === "internal_error") {
    return new RuntimeError("engine_unavailable", `llama-server start failed: ${(error as Error).message}`, { cause: error, details });
  }
  return new RuntimeError(runtime.code, runtime.message, { cause: runtime, details: { ...runtime.details, ...details } });
}
