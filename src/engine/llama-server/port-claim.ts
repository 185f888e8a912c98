// Before every spawn: make sure the configured port is ours to use. A llama-server left behind
// by a crash of ours (named by the pid file, its owner gone, proven by its command line and by
// having started when the file was written) is reaped; anything else listening there is someone
// else's, and we refuse rather than share it silently.
import type { Logger } from "../../logging/create-logger.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import path from "node:path";
import { isRecordedServer, legacyPidFileName, readPidFile, removePidFile, startedInTime } from "./pid-file.js";
import { isPortFree } from "./port-probe.js";
import { isProcessAlive } from "../../shared/process/is-process-alive.js";
import { readProcessInfo } from "../../shared/process/process-info.js";
import { hostProcessPlatform, type ProcessPlatform } from "../../shared/process/process-platform.js";
import { terminateTree } from "../../shared/process/terminate-tree.js";
import { LLAMA_SERVER_HOST } from "./server-args.js";
import { delay as sleep } from "../../shared/abort.js";

export interface PortClaim {
  modelName: string;
  port: number;
  pidFile: string;
  logger: Logger;
  /** TERM-to-KILL grace when reaping an orphan. */
  graceMs: number;
  /** How to read and stop processes here; the host's by default. */
  platform?: ProcessPlatform;
}

export interface ClaimResult {
  /** pid of the orphaned llama-server that was stopped, if any. */
  reapedPid: number | null;
}

/** A bound socket is released when its process dies, but give the kernel a moment. */
const PORT_RELEASE_WAIT_MS = 1000;

export async function claimPort(claim: PortClaim): Promise<ClaimResult> {
  const { logger, port } = claim;
  let reapedPid: number | null = null;
  let liveOwner: number | null = null;
  const platform = claim.platform ?? hostProcessPlatform();

  const legacy = legacyPidFileName(claim.modelName);
  for (const pidFile of legacy === null ? [claim.pidFile] : [claim.pidFile, path.join(path.dirname(claim.pidFile), legacy)]) {
    const record = await readPidFile(pidFile);
    if (record === null || (pidFile !== claim.pidFile && record.model !== claim.modelName)) continue;
    const owner = record.ownerPid;
    if (owner !== undefined && owner !== process.pid && isProcessAlive(owner)) {
      // Another live local-ai process started it: its server, not an orphan. Never kill it.
      liveOwner = owner;
    } else {
      if (isProcessAlive(record.pid)) {
        const info = await readProcessInfo(record.pid, platform, { executable: record.binary });
        const argv = info?.argv ?? null;
        const startedAt = info?.startedAt ?? null;
        if (argv !== null && isRecordedServer(record, argv) && startedInTime(record, startedAt)) {
          logger.warn({ orphan_pid: record.pid, port: record.port, startedAt: record.startedAt }, "reaping a llama-server orphaned by an earlier run");
          const result = await terminateTree(record.pid, claim.graceMs, platform);
          if (!result.exited) {
            throw new RuntimeError("engine_unavailable", `Could not stop the orphaned llama-server (pid ${record.pid}) on port ${record.port}`, {
              details: { pid: record.pid, port: record.port },
            });
          }
          reapedPid = record.pid;
        } else {
          logger.info(
            { recorded_pid: record.pid, argv: argv?.slice(0, 3), recorded_start: record.startedAt, process_start: startedAt === null ? null : new Date(startedAt).toISOString() },
            "stale llama-server pid file names another process; leaving it alone",
          );
        }
      }
      await removePidFile(pidFile);
    }
  }

  const deadline = Date.now() + (reapedPid !== null ? PORT_RELEASE_WAIT_MS : 0);
  for (;;) {
    if (await isPortFree(port, LLAMA_SERVER_HOST)) return { reapedPid };
    if (Date.now() >= deadline) break;
    await sleep(50);
  }
  const key = `llama.models.${claim.modelName}.port`;
  const holder = liveOwner !== null ? `another running local-ai (pid ${liveOwner})` : "another process";
  throw new RuntimeError(
    "engine_unavailable",
    `Port ${port} (${key}) is already in use by ${holder}; set ${key} to a free port or stop whatever listens on ${LLAMA_SERVER_HOST}:${port}`,
    { details: { port, config_key: key, ...(liveOwner !== null ? { owner_pid: liveOwner } : {}) } },
  );
}
