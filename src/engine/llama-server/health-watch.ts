// Watches a ready server until it is gone: it exits by itself (crash, kill), or it stops
// answering /health (hung, wedged) and is stopped here so the supervisor can relaunch it.
import type { Logger } from "../../logging/create-logger.js";
import type { LaunchedServer } from "./launch.js";
import { callServer, errorMessageOf } from "./server-http.js";
import type { ExitInfo } from "./server-process.js";
import { delay as sleep } from "../../shared/abort.js";

export interface HealthWatchTuning {
  healthIntervalMs: number;
  healthTimeoutMs: number;
  healthFailuresBeforeRestart: number;
  stopGraceMs: number;
}

export interface WatchOutcome {
  exit: ExitInfo;
  /** Set when the watch stopped the server for failing its health checks. */
  unhealthy: string | null;
}

export async function watchServer(server: LaunchedServer, tuning: HealthWatchTuning, log: Logger): Promise<WatchOutcome> {
  const stop = new AbortController();
  const healthLoop = (async (): Promise<string | null> => {
    let failures = 0;
    for (;;) {
      // Unref'd: an idle, healthy server must not keep a finished process alive by itself.
      await sleep(tuning.healthIntervalMs, stop.signal, { unref: true });
      const answer = await callServer(server.endpoint, "/health", { timeoutMs: tuning.healthTimeoutMs, signal: stop.signal });
      failures = answer.status === 200 ? 0 : failures + 1;
      if (failures >= tuning.healthFailuresBeforeRestart) {
        const last = answer.status === 0 ? String(answer.body) : `HTTP ${answer.status} ${errorMessageOf(answer.body)}`;
        log.warn({ child_pid: server.process.pid, failures, last }, "llama-server failed its health checks; stopping it");
        await server.process.stop(tuning.stopGraceMs);
        return `failed ${failures} health checks in a row (${last})`;
      }
    }
  })().catch(() => null); // the watch ends by abort once the child has exited
  const exit = await server.process.exited;
  stop.abort();
  return { exit, unhealthy: await healthLoop };
}
