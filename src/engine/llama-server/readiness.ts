// Is a freshly spawned server ready? Three steps, each needed:
// 1. /health answers 200 (503 "Loading model" while loading; refused before it listens). The
//    deadline is an idle timeout that every new log line from the child pushes back, so a big
//    model that is visibly loading is never killed for being slow, and a hung one is.
// 2. /v1/models accepts our per-launch key: the listener is our child, not a server someone
//    else started on that port (/health itself is public, so it cannot tell).
// 3. One greedy token through /completion: the model really computes.
import { RuntimeError } from "../../shared/runtime-error.js";
import { callServer, errorMessageOf, type ServerEndpoint } from "./server-http.js";
import type { ExitInfo } from "./server-process.js";
import { delay as sleep } from "../../shared/abort.js";

export interface ReadinessWatch {
  /** Date.now() of the child's latest output line (loading progress). */
  lastProgressAt: () => number;
  /** Settles when the child exits; startup fails at once then. */
  exited: Promise<ExitInfo>;
  /** No output and no readiness for this long: the start has hung. */
  idleTimeoutMs: number;
  /** Absolute cap, whatever the progress. */
  maxStartupMs: number;
  signal: AbortSignal;
  onPhase?: (phase: "loading" | "checking") => void;
}

/** Thrown when the child exits during startup; the supervisor adds the log excerpt. */
export class StartupExit extends Error {
  constructor(readonly exit: ExitInfo) {
    super(`llama-server exited during startup (${exit.signal !== null ? `signal ${exit.signal}` : `exit code ${exit.code}`})`);
  }
}

const POLL_MS = 50;

export async function waitForReady(endpoint: ServerEndpoint, watch: ReadinessWatch): Promise<void> {
  let exit: ExitInfo | null = null;
  void watch.exited.then((info) => {
    exit = info;
  });
  const started = Date.now();
  const failIfExited = (): void => {
    if (exit !== null) throw new StartupExit(exit);
  };

  watch.onPhase?.("loading");
  let lastStatus = "no answer yet";
  for (;;) {
    failIfExited();
    const now = Date.now();
    const idleSince = Math.max(started, watch.lastProgressAt());
    if (now - idleSince > watch.idleTimeoutMs || now - started > watch.maxStartupMs) {
      throw new RuntimeError(
        "engine_unavailable",
        `llama-server did not become healthy within ${Math.round((now - started) / 1000)} s (${now - idleSince} ms without log output; last /health: ${lastStatus})`,
      );
    }
    const answer = await callServer(endpoint, "/health", { timeoutMs: 1000, signal: watch.signal });
    if (answer.status === 200) break;
    lastStatus = answer.status === 0 ? String(answer.body) : `HTTP ${answer.status} ${errorMessageOf(answer.body)}`;
    await sleep(POLL_MS, watch.signal);
  }

  failIfExited();
  watch.onPhase?.("checking");
  await verifyOwnership(endpoint, watch.signal);
  const check = await callServer(endpoint, "/completion", {
    method: "POST",
    json: { prompt: "Hi", n_predict: 1, temperature: 0, cache_prompt: false },
    timeoutMs: Math.max(5000, watch.idleTimeoutMs),
    signal: watch.signal,
  });
  failIfExited();
  if (check.status !== 200) {
    throw new RuntimeError("engine_unavailable", `llama-server failed its ready check (one-token generation): HTTP ${check.status} ${errorMessageOf(check.body)}`);
  }
}

/** Our key accepted: the listener is ours. Rejected: another server holds the port. */
export async function verifyOwnership(endpoint: ServerEndpoint, signal: AbortSignal): Promise<void> {
  const answer = await callServer(endpoint, "/v1/models", { timeoutMs: 2000, signal });
  if (answer.status === 200) return;
  if (answer.status === 401 || answer.status === 403) {
    throw new RuntimeError(
      "engine_unavailable",
      `Another server answers on 127.0.0.1:${endpoint.port}: it rejected this launch's API key, so it is not the llama-server we started`,
      { details: { port: endpoint.port } },
    );
  }
  throw new RuntimeError("engine_unavailable", `llama-server on port ${endpoint.port} answered /v1/models with HTTP ${answer.status}: ${errorMessageOf(answer.body)}`);
}
