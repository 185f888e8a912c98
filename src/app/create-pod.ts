import path from "node:path";
import type { Logger } from "pino";
import { formatProblem } from "../config/config-problem.js";
import { loadConfig, parseConfigText, type ConfigState } from "../config/load-config.js";
import { createLogger } from "../logging/create-logger.js";
import type { PodEvent, PodMethodMessage } from "../pod/pod-event-types.js";
import { PodHub } from "../pod/pod-hub.js";
import { parsePodMessage } from "../pod/pod-request.js";
import { resolvePodSession } from "../pod/pod-state-file.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { readPackageInfo } from "../shared/version.js";
import { createRuntime } from "./runtime/runtime.js";

export interface CreatePodOptions {
  /** A config file (relative to `cwd`) or a config object (the file's content; relative paths resolve against `cwd`). */
  config: string | Record<string, unknown>;
  /** The pod's name (its state file `pods/<name>.json` remembers its session); the first agent's name when absent. */
  name?: string;
  /** The session to serve; the one this pod served last (else a new one) when absent, as `serve-socket --session`. */
  sessionId?: string;
  /** Where logs go; a pino logger on stderr at app.log_level when absent. Nothing is ever written to stdout. */
  logger?: Logger;
  cwd?: string;
  /** For `${VAR}` in the config and LOCAL_AI_* settings; process.env when absent. */
  env?: Readonly<Record<string, string | undefined>>;
}

export type PodEventListener = (event: PodEvent) => void;

/** A pod held in this process (seed 004's direct call): the socket pod's core without the socket. */
export interface Pod {
  readonly name: string;
  readonly sessionId: string;
  /** Every event from now on, exactly as a socket client gets them; returns the function that unregisters it. */
  listen(listener: PodEventListener): () => void;
  /** A method message, validated as on the socket; refusals and bad input arrive as `error` events, never as a throw. */
  send(message: PodMethodMessage): void;
  run(input: string): void;
  resume(): void;
  cancel(): void;
  getStatus(): void;
  getHistory(): void;
  /** The running turn is cancelled, engines and MCP children stopped; the session (and a paused turn) stay on disk. */
  close(): Promise<void>;
}

/**
 * `import { createPod } from "local-ai-core/pod"`: one pod in this process on the same PodHub as
 * `serve-socket`, with the same session and state file. Rejects only when the pod cannot exist
 * (the config does not load, the data dir cannot be written); the model loads on the first run.
 */
export async function createPod(options: CreatePodOptions): Promise<Pod> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const configState = await loadPodConfig(options.config, cwd, env);
  const { config } = configState;
  const podName = options.name ?? Object.keys(config.agents)[0] ?? "assistant";
  let sessionId: string;
  try {
    ({ sessionId } = await resolvePodSession(config.app.data_dir, podName, options.sessionId));
  } catch (error) {
    if (error instanceof RuntimeError) throw error;
    throw new RuntimeError("storage_error", `cannot keep the pod's state under ${config.app.data_dir}: ${(error as Error).message}`, { cause: error });
  }
  const logger = (options.logger ?? createLogger({ level: config.app.log_level, env })).child({ pod: podName });
  const runtime = createRuntime({ configState, logger, info: readPackageInfo(), env });
  const hub = new PodHub({ sessionId, podName, runner: () => runtime.sessionRunner(), coalesceMs: config.stdio.coalesce_ms, logger });
  try {
    await hub.restore();
  } catch (error) {
    await runtime.close();
    throw error;
  }
  logger.info({ session_id: sessionId, pod_name: podName, version: runtime.info.version }, "pod created in process");

  let closing: Promise<void> | null = null;
  // The seed: refusals and bad input are error events to the listeners (no sender to single out here).
  const toListeners = (event: PodEvent): void => hub.broadcast(event);
  const send = (message: PodMethodMessage): void => {
    if (closing !== null) return toListeners({ event: "error", data: { code: "internal", message: "the pod is closed" } });
    const parsed = parsePodMessage(message);
    if (!parsed.ok) return toListeners({ event: "error", data: { code: "internal", message: parsed.message } });
    hub.handle(parsed.request, toListeners);
  };
  return {
    name: podName,
    sessionId,
    listen: (listener) => hub.listen(listener),
    send,
    run: (input) => send({ method: "run", params: { input } }),
    resume: () => send({ method: "resume" }),
    cancel: () => send({ method: "cancel" }),
    getStatus: () => send({ method: "get_status" }),
    getHistory: () => send({ method: "get_history" }),
    close: () =>
      (closing ??= (async () => {
        await hub.stop(0);
        await runtime.close();
        logger.info("pod closed");
      })()),
  };
}

/** A config file or object, valid and with an agent, else the RuntimeError that says why. */
async function loadPodConfig(config: CreatePodOptions["config"], cwd: string, env: Readonly<Record<string, string | undefined>>): Promise<ConfigState & { status: "loaded" }> {
  let state: ConfigState;
  if (typeof config === "string") {
    if (config === "") throw new RuntimeError("config_missing", "createPod: options.config names no file");
    state = await loadConfig({ flag: config, env, cwd });
  } else {
    // JSON is YAML: an object goes through the file's parser (env substitution, paths, the same problems).
    const parsed = parseConfigText(JSON.stringify(config), env, cwd);
    const file = path.join(cwd, "(config object)");
    state = parsed.ok ? { status: "loaded", path: file, source: "flag", config: parsed.config } : { status: "invalid", path: file, source: "flag", problems: parsed.problems };
  }
  if (state.status === "missing") throw new RuntimeError("config_missing", `no config file at ${state.path}`);
  if (state.status === "invalid") {
    const where = state.path;
    throw new RuntimeError("config_invalid", `invalid config ${where}:\n${state.problems.map((p) => `  ${formatProblem(where, p)}`).join("\n")}`, { details: { problems: state.problems } });
  }
  if (Object.keys(state.config.agents).length === 0) throw new RuntimeError("config_invalid", `no agent is configured under agents in ${state.path}`);
  return state;
}

export type { PendingCall, PodErrorCode, PodEvent, PodEventName, PodMethodMessage, PodState, TurnStopReason } from "../pod/pod-event-types.js";
export type { ErrorCode } from "../shared/runtime-error.js";
export { RuntimeError, isRuntimeError } from "../shared/runtime-error.js";
