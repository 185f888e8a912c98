import path from "node:path";
import type { ConfigState } from "../../config/load-config.js";
import type { Config } from "../../config/schema.js";
import type { ClientLimits } from "../../pod/pod-client-connection.js";
import { handshakeOnPosix, podEndpoint } from "../../pod/pod-endpoint.js";
import { PodServer } from "../../pod/pod-server.js";
import { ensurePodToken } from "../../pod/pod-token.js";
import { SocketInUseError } from "../../pod/pod-socket-file.js";
import { resolvePodSession } from "../../pod/pod-state-file.js";
import { ensurePrivateDir } from "../../shared/private-dir.js";
import { readPackageInfo } from "../../shared/version.js";
import { createRuntime } from "../runtime/runtime.js";
import { startServerProcess } from "../process/server-process.js";
import type { ServeOutcome } from "./serve-outcome.js";
import type { SignalLatch } from "../process/signal-latch.js";

export interface ServeSocketOptions {
  config: Config;
  configState: ConfigState & { status: "loaded" };
  /** --socket, relative to `cwd`; `<data_dir>/pod.sock` when absent. */
  socket?: string | undefined;
  /** --session: the session to serve; the one this pod served last (else a new one) when absent. */
  session?: string | undefined;
  /** --name: the pod's name; the first agent's name when absent. */
  name?: string | undefined;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The platform whose endpoint to use (a named pipe on win32); the host's by default. */
  os?: NodeJS.Platform;
  signals?: SignalLatch | undefined;
  /** --exit-on-stdin-eof: stop gracefully when this stream (the process's stdin) ends. */
  lifeline?: (NodeJS.ReadableStream & { destroy?(): void }) | undefined;
}

/** Per-client defaults (docs/protocol-pod.md "Limits"); tests shorten them through the environment. */
const QUEUE_LINES = 4096;
const MAX_QUEUE_BYTES = 32 * 1024 * 1024;
const STALL_MS = 30_000;

/**
 * `local-ai serve-socket`: one pod (one session) on a Unix socket, started eagerly and served
 * until SIGTERM / SIGINT. Resolves once it has stopped, or with the line that says why it could
 * not start (socket in use, a bad session).
 */
export async function serveSocket(options: ServeSocketOptions): Promise<ServeOutcome> {
  const { config, configState, env } = options;
  // The serving config has at least one agent (loadServingConfig).
  const podName = options.name ?? Object.keys(config.agents)[0] ?? "assistant";
  const endpoint = podEndpoint({ dataDir: config.app.data_dir, socket: options.socket, cwd: options.cwd, os: options.os ?? process.platform, handshakeOnPosix: handshakeOnPosix(env) });
  const socketPath = endpoint.path;
  let sessionId: string;
  let handshakeToken: string | null = null;
  try {
    // Under data_dir (the default) the socket's folder is private; elsewhere only new folders are.
    if (!endpoint.pipe) await ensurePrivateDir(path.dirname(socketPath), config.app.data_dir);
    if (endpoint.tokenFile !== null) {
      await ensurePrivateDir(path.dirname(endpoint.tokenFile), config.app.data_dir);
      handshakeToken = await ensurePodToken(endpoint.tokenFile);
    }
    ({ sessionId } = await resolvePodSession(config.app.data_dir, podName, options.session));
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }

  const serving = startServerProcess({ level: config.app.log_level, env, signals: options.signals, lifeline: options.lifeline });
  const { logger } = serving;
  const runtime = createRuntime({ configState, logger, info: readPackageInfo(), env });
  const server = new PodServer({ socketPath, sessionId, podName, runner: () => runtime.sessionRunner(), coalesceMs: config.stdio.coalesce_ms, limits: clientLimits(env, config.stdio.max_line_bytes), logger, pipe: endpoint.pipe, handshakeToken });
  try {
    await server.listen();
    await server.restore();
  } catch (error) {
    await runtime.close();
    await serving.finish();
    if (!(error instanceof SocketInUseError)) logger.error({ err: error }, "serve-socket could not start");
    return { ok: false, message: (error as Error).message };
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
  return { ok: true, exitCode: 0 };
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
