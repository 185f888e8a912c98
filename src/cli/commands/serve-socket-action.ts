import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { createRuntime } from "../../app/runtime.js";
import { startServerProcess } from "../../app/server-process.js";
import type { ClientLimits } from "../../pod/pod-client-connection.js";
import { PodServer } from "../../pod/pod-server.js";
import { SocketInUseError } from "../../pod/pod-socket-file.js";
import { resolvePodSession } from "../../pod/pod-state-file.js";
import { readPackageInfo } from "../../shared/version.js";
import type { CliDeps } from "../cli-deps.js";
import { loadServingConfig } from "../serving-config.js";

export interface ServeSocketOptions {
  config?: string;
  mcpConfig?: string;
  socket?: string;
  session?: string;
  name?: string;
}

/** Per-client defaults (docs/protocol-pod.md "Limits"); tests shorten them through the environment. */
const QUEUE_LINES = 4096;
const MAX_QUEUE_BYTES = 32 * 1024 * 1024;
const STALL_MS = 30_000;

/** The `serve-socket` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runServeSocketCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<ServeSocketOptions>();
  const fail = (message: string): void => {
    deps.stderr.write(`local-ai serve-socket: ${message}\n`);
    deps.setExitCode(1);
  };
  const loaded = await loadServingConfig(options, deps);
  if (!loaded.ok) return fail(loaded.message);
  const { config, configState } = loaded;
  // loadServingConfig guarantees at least one agent.
  const podName = options.name ?? Object.keys(config.agents)[0] ?? "assistant";
  const socketPath = path.resolve(deps.cwd, options.socket ?? path.join(config.app.data_dir, "pod.sock"));
  let sessionId: string;
  try {
    await mkdir(path.dirname(socketPath), { recursive: true });
    ({ sessionId } = await resolvePodSession(config.app.data_dir, podName, options.session));
  } catch (error) {
    return fail((error as Error).message);
  }

  const serving = startServerProcess({ level: config.app.log_level, env: deps.env, signals: deps.signals });
  const { logger } = serving;
  const runtime = createRuntime({ configState, logger, info: readPackageInfo(), env: deps.env });
  const server = new PodServer({ socketPath, sessionId, podName, runner: () => runtime.sessionRunner(), coalesceMs: config.stdio.coalesce_ms, limits: clientLimits(deps.env, config.stdio.max_line_bytes), logger });
  try {
    await server.listen();
    await server.restore();
  } catch (error) {
    await runtime.close();
    await serving.finish();
    if (!(error instanceof SocketInUseError)) logger.error({ err: error }, "serve-socket could not start");
    return fail((error as Error).message);
  }
  logger.info({ socket: socketPath, session_id: sessionId, pod_name: podName, version: runtime.info.version }, "serve-socket listening");

  // Eager warm-up; a run that arrives meanwhile waits for the same warm-up in the SessionRunner.
  const startedAt = Date.now();
  void runtime.warmUpAll(serving.signal).then(
    () => logger.info({ ms: Date.now() - startedAt }, "warm-up done; ready"),
    (error: unknown) => {
      if (!serving.signal.aborted) logger.error({ err: error }, "warm-up failed; each run retries it");
    },
  );

  await serving.stopRequested();
  logger.info({ grace_ms: config.stdio.shutdown_grace_ms }, "serve-socket stopping: no new clients; the running turn gets the grace period");
  await server.close(config.stdio.shutdown_grace_ms, config.stdio.flush_timeout_ms);
  await runtime.close();
  logger.info("serve-socket stopped");
  await serving.finish();
  process.exit(0);
}

function clientLimits(env: Readonly<Record<string, string | undefined>>, maxLineBytes: number): ClientLimits {
  const positive = (name: string, fallback: number): number => {
    const value = Number(env[name]);
    return Number.isInteger(value) && value > 0 ? value : fallback;
  };
  return {
    queueLines: positive("LOCAL_AI_POD_QUEUE_LINES", QUEUE_LINES),
    maxQueueBytes: positive("LOCAL_AI_POD_MAX_QUEUE_BYTES", MAX_QUEUE_BYTES),
    stallMs: positive("LOCAL_AI_POD_STALL_MS", STALL_MS),
    maxLineBytes,
  };
}
