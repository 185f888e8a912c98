import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import {
  formatPidFile, isRecordedServer, legacyPidFileName, parsePidFile, pidFilePath, readPidFile, removePidFile, writePidFile, type PidRecord,
} from "../../src/engine/llama-server/pid-file.js";
import { isProcessAlive } from "../../src/shared/process/is-process-alive.js";
import { readCommandLine } from "../../src/shared/process/read-command-line.js";
import { terminateProcessGroup } from "../../src/shared/process/terminate.js";

const record: PidRecord = {
  pid: 4242,
  port: 8081,
  binary: "/opt/llama/bin/llama-server",
  model: "default",
  startedAt: "2025-01-01T00:00:00.000Z",
  ownerPid: 77,
};

test("pid file path stays inside <data_dir>/run whatever the model name", () => {
  assert.equal(pidFilePath("/data", "default"), path.join("/data", "run", "llama-server-default.pid"));
  assert.match(pidFilePath("/data", "../../etc/x y"), /^\/data\/run\/llama-server-\+_[0-9a-f]{16}\.pid$/);
});

test("models whose names differ only by case get pid files whose names differ case-insensitively; the old name is still known", () => {
  const upper = path.basename(pidFilePath("/data", "Qwen"));
  const lower = path.basename(pidFilePath("/data", "qwen"));
  assert.notEqual(upper.toLowerCase(), lower.toLowerCase());
  assert.equal(lower, "llama-server-qwen.pid");
  assert.equal(legacyPidFileName("Qwen"), "llama-server-Qwen.pid");
  assert.equal(legacyPidFileName("qwen"), null);
  assert.equal(legacyPidFileName("../x y"), "llama-server-.._x_y.pid");
});

test("pid file round-trips and rejects torn or foreign content", () => {
  assert.deepEqual(parsePidFile(formatPidFile(record)), record);
  const { ownerPid: _owner, ...withoutOwner } = record;
  assert.deepEqual(parsePidFile(JSON.stringify(withoutOwner)), withoutOwner);
  assert.equal(parsePidFile(formatPidFile(record).slice(0, 20)), null);
  assert.equal(parsePidFile("4242\n"), null);
  assert.equal(parsePidFile(JSON.stringify({ ...record, pid: -1 })), null);
  assert.equal(parsePidFile(JSON.stringify({ ...record, port: 70000 })), null);
  assert.equal(parsePidFile(JSON.stringify({ ...record, binary: "" })), null);
});

test("only a llama-server serving the recorded port counts as the recorded process", () => {
  const argv = [record.binary, "-m", "/m.gguf", "--host", "127.0.0.1", "--port", "8081", "--api-key", "x"];
  assert.equal(isRecordedServer(record, argv), true);
  assert.equal(isRecordedServer(record, ["/usr/local/bin/llama-server", "--port", "8081"]), true, "same name, moved binary");
  assert.equal(isRecordedServer(record, [record.binary, "--port", "8082"]), false, "other port");
  assert.equal(isRecordedServer(record, ["/usr/bin/python3", "-m", "http.server", "--port", "8081"]), false, "pid reused");
  assert.equal(isRecordedServer(record, []), false);
});

test("write is atomic, read tolerates a missing file, remove respects a newer owner", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "pidfile-"));
  try {
    const file = pidFilePath(dir, "m");
    assert.equal(await readPidFile(file), null);
    await writePidFile(file, record);
    assert.deepEqual(await readPidFile(file), record);
    await removePidFile(file, 1); // names 4242: not ours to remove
    assert.deepEqual(parsePidFile(await readFile(file, "utf8")), record);
    await removePidFile(file, 4242);
    assert.equal(await readPidFile(file), null);
    await removePidFile(file); // absent: no error
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("process inspection: alive, command line, group termination", async () => {
  assert.equal(isProcessAlive(process.pid), true);
  const argv = await readCommandLine(process.pid);
  assert.equal(argv?.[0], process.execPath);
  const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
  const pid = child.pid!;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  assert.deepEqual(await readCommandLine(pid), ["sleep", "30"]);
  const result = await terminateProcessGroup(pid, 1000);
  await exited;
  assert.deepEqual(result, { exited: true, forced: false });
  assert.equal(isProcessAlive(pid), false);
  assert.equal(await readCommandLine(pid), null);
});
