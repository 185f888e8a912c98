import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { pidFilePath, readPidFile, startedInTime, writePidFile } from "../../src/engine/llama-server/pid-file.js";
import { claimPort } from "../../src/engine/llama-server/port-claim.js";
import { isPortFree } from "../../src/engine/llama-server/port-probe.js";
import { isProcessAlive } from "../../src/shared/process/is-process-alive.js";
import { processStartTime } from "../../src/shared/process/process-start-time.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { captureLogger } from "../helpers/capture-logger.js";

function listen(host: string): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, host, () => {
      const address = server.address();
      resolve({ server, port: typeof address === "object" && address !== null ? address.port : 0 });
    });
  });
}

const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

test("isPortFree: false while someone listens (loopback or wildcard), true after", async () => {
  const { server, port } = await listen("127.0.0.1");
  assert.equal(await isPortFree(port, "127.0.0.1"), false);
  await close(server);
  assert.equal(await isPortFree(port, "127.0.0.1"), true);

  const wildcard = await listen("0.0.0.0");
  assert.equal(await isPortFree(wildcard.port, "127.0.0.1"), false);
  await close(wildcard.server);
});

test("claimPort refuses a port held by another process and names the config key", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "claim-"));
  const { server, port } = await listen("127.0.0.1");
  try {
    await assert.rejects(
      claimPort({ modelName: "big", port, pidFile: pidFilePath(dir, "big"), logger: captureLogger().logger, graceMs: 500 }),
      (error: unknown) => {
        assert.ok(error instanceof RuntimeError);
        assert.equal(error.code, "engine_unavailable");
        assert.match(error.message, new RegExp(`Port ${port} \\(llama\\.models\\.big\\.port\\) is already in use by another process`));
        assert.equal(error.details?.["config_key"], "llama.models.big.port");
        return true;
      },
    );
  } finally {
    await close(server);
    await rm(dir, { recursive: true, force: true });
  }
});

test("claimPort never kills a process the pid file names unless it is that llama-server", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "claim-"));
  const bystander = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
  const pidFile = pidFilePath(dir, "m");
  try {
    const { port } = await listen("127.0.0.1").then(async ({ server, port }) => {
      await close(server);
      return { port };
    });
    await writePidFile(pidFile, { pid: bystander.pid!, port, binary: "/x/llama-server", model: "m", startedAt: new Date().toISOString() });
    const result = await claimPort({ modelName: "m", port, pidFile, logger: captureLogger().logger, graceMs: 500 });
    assert.equal(result.reapedPid, null);
    assert.equal(isProcessAlive(bystander.pid!), true, "a reused pid is left alone");
    assert.equal(await readPidFile(pidFile), null, "the stale file is removed");
  } finally {
    bystander.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
});

test("claimPort leaves the pid file of a live local-ai owner alone and says who holds the port", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "claim-"));
  const owner = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
  const { server, port } = await listen("127.0.0.1");
  const pidFile = pidFilePath(dir, "m");
  try {
    await writePidFile(pidFile, { pid: 999_999, port, binary: "/x/llama-server", model: "m", startedAt: new Date().toISOString(), ownerPid: owner.pid! });
    await assert.rejects(claimPort({ modelName: "m", port, pidFile, logger: captureLogger().logger, graceMs: 500 }), /another running local-ai \(pid \d+\)/);
    assert.notEqual(await readPidFile(pidFile), null);
  } finally {
    owner.kill("SIGKILL");
    await close(server);
    await rm(dir, { recursive: true, force: true });
  }
});

test("claimPort leaves alone a llama-server on the recorded port that started after the pid file was written (a reused pid)", { skip: process.platform !== "linux" && "reads process start times from /proc" }, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "claim-"));
  const { fakeServer, port, child: lookalike } = await spawnLookalike(dir, false);
  const pidFile = pidFilePath(dir, "m");
  try {
    await once(lookalike, "spawn");
    const started = await processStartTime(lookalike.pid!);
    assert.ok(started !== null && Math.abs(started - Date.now()) < 60_000, `start time read from /proc: ${String(started)}`);
    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const record = { pid: lookalike.pid!, port, binary: fakeServer, model: "m", startedAt: anHourAgo };
    assert.equal(startedInTime(record, started), false);
    assert.equal(startedInTime({ ...record, startedAt: new Date().toISOString() }, started), true, "ours: started right before its record");
    assert.equal(startedInTime(record, null), true, "no /proc: the command line decides alone");
    await writePidFile(pidFile, record);
    const { logger, records } = captureLogger("info");
    const result = await claimPort({ modelName: "m", port, pidFile, logger, graceMs: 500 });
    assert.equal(result.reapedPid, null);
    assert.equal(isProcessAlive(lookalike.pid!), true, "not ours: left alone");
    assert.ok(records().some((r) => r["msg"] === "stale llama-server pid file names another process; leaving it alone" && r["recorded_start"] === anHourAgo));
    assert.equal(await readPidFile(pidFile), null, "the stale file is removed");
  } finally {
    lookalike.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
});

test("claimPort reaps an orphan named only by the pid file of an earlier version (raw model name) and leaves other models' files alone", { skip: process.platform !== "linux" && "reads process start times from /proc" }, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "claim-"));
  // Its own process group, as the supervisor starts llama-server.
  const { fakeServer, port, child: orphan } = await spawnLookalike(dir, true);
  const legacyFile = path.join(dir, "run", "llama-server-Qwen.pid");
  const lowerFile = pidFilePath(dir, "qwen");
  try {
    await once(orphan, "spawn");
    const exited = once(orphan, "exit");
    await writePidFile(legacyFile, { pid: orphan.pid!, port, binary: fakeServer, model: "Qwen", startedAt: new Date().toISOString() });
    await writePidFile(lowerFile, { pid: 999_999, port: port + 1, binary: fakeServer, model: "qwen", startedAt: new Date().toISOString() });
    assert.equal(pidFilePath(dir, "Qwen"), path.join(dir, "run", "llama-server-+qwen.pid"));
    const result = await claimPort({ modelName: "Qwen", port, pidFile: pidFilePath(dir, "Qwen"), logger: captureLogger().logger, graceMs: 500 });
    assert.equal(result.reapedPid, orphan.pid);
    await exited;
    assert.equal(await readPidFile(legacyFile), null, "the old file is removed");
    assert.equal((await readPidFile(lowerFile))?.model, "qwen", "model qwen's file is not Qwen's");

    // On a case-insensitive disk the old name can open another model's file: its record decides.
    await writePidFile(legacyFile, { pid: 999_999, port, binary: fakeServer, model: "qwen", startedAt: new Date().toISOString() });
    await claimPort({ modelName: "Qwen", port, pidFile: pidFilePath(dir, "Qwen"), logger: captureLogger().logger, graceMs: 500 });
    assert.equal((await readPidFile(legacyFile))?.model, "qwen", "a file naming another model is left alone");
  } finally {
    orphan.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
});

/**
 * A process whose command line passes for a llama-server on a free port: argv[0] a link named
 * llama-server (to node), `--port N`; `detached` puts it in its own process group.
 */
async function spawnLookalike(dir: string, detached: boolean): Promise<{ fakeServer: string; port: number; child: ChildProcess }> {
  const fakeServer = path.join(dir, "llama-server");
  await symlink(process.execPath, fakeServer);
  const port = await listen("127.0.0.1").then(async ({ server, port }) => {
    await close(server);
    return port;
  });
  const child = spawn(fakeServer, ["-e", "setInterval(() => {}, 60000)", "--", "--port", String(port)], { stdio: "ignore", detached });
  return { fakeServer, port, child };
}
