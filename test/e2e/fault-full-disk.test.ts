import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, ftruncateSync, fstatSync, openSync, writeSync } from "node:fs";
import { mkdtemp, readdir, rm, statfs, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { CliProcess, protocolViolations, type WireMessage } from "../helpers/cli-process.js";
import { agentsYaml } from "../helpers/agents-yaml.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

/**
 * `app.data_dir` on a 1 MiB tmpfs (built CLI, serve-stdio, embedded demo model). Filled to the
 * last byte: a chat is a clear `storage_full` error naming the file, `ping` still answers, a new
 * session leaves no folder behind, and the saved session stays whole. With a few pages free the
 * turn fails at a later write (checkpoint, history) or succeeds: always one of the two, never an
 * internal error, never a damaged history. Remounted read-only: `storage_error`. With the space
 * back, the session loads and takes a turn. Mounting needs root; elsewhere the test skips.
 */
const PAGE = 4096;
const USER = "default_user";

let demoPath = "";
let mountDir = "";
let mounted = false;
let skipReason: string | null = null;
const procs: CliProcess[] = [];

before(async () => {
  demoPath = await ensureFixture("demo");
  mountDir = await mkdtemp(path.join(tmpdir(), "local-ai-tmpfs-"));
  if (process.platform !== "linux" || process.getuid?.() !== 0) {
    skipReason = "mounting a tmpfs needs root on Linux (mount -t tmpfs); not root here";
    return;
  }
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountDir], { encoding: "utf8" });
  if (mount.status !== 0) {
    skipReason = `mount -t tmpfs failed here (${(mount.stderr || mount.error?.message || `exit ${String(mount.status)}`).trim()})`;
    return;
  }
  mounted = true;
});

after(async () => {
  for (const proc of procs) {
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      proc.kill("SIGKILL");
      await proc.exited;
    }
  }
  if (mounted && spawnSync("umount", [mountDir]).status !== 0) spawnSync("umount", ["-l", mountDir]);
  await rm(mountDir, { recursive: true, force: true });
});

/** Writes `file` until the file system refuses (ENOSPC); returns its size. */
function fill(file: string): number {
  const fd = openSync(file, "a");
  try {
    for (const size of [64 * 1024, PAGE, 512, 1]) {
      const chunk = Buffer.alloc(size, 0x61);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
          break;
        }
      }
    }
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

/** Frees about `pages` pages by shortening the filler. */
function freePages(file: string, pages: number): void {
  const fd = openSync(file, "r+");
  try {
    const size = fstatSync(fd).size;
    ftruncateSync(fd, Math.max(0, size - pages * PAGE - (size % PAGE)));
  } finally {
    closeSync(fd);
  }
}

async function freeBytes(): Promise<number> {
  const info = await statfs(mountDir);
  return info.bavail * info.bsize;
}

const resultOf = (reply: WireMessage): { response: string; warnings: string[] } => {
  assert.equal(reply.type, "result", JSON.stringify(reply));
  return reply.result as { response: string; warnings: string[] };
};

describe("data_dir on a small full tmpfs (built CLI)", () => {
  it("a full disk is storage_full naming the file, the server keeps serving, no session is damaged", { timeout: 180_000 }, async (t) => {
    if (skipReason !== null) {
      t.skip(skipReason);
      return;
    }
    const dataDir = path.join(mountDir, "data");
    const configDir = await mkdtemp(path.join(tmpdir(), "local-ai-test-"));
    const configPath = path.join(configDir, "config.yaml");
    await writeFile(configPath, `app:\n  data_dir: ${JSON.stringify(dataDir)}\n${agentsYaml(demoPath)}`);
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: configDir });
    procs.push(proc);
    const store = new FileSessionStore(dataDir);
    /** The saved session, read by the store's own loader: whole turns, no warning. */
    const savedTurns = async (): Promise<number> => {
      const loaded = await store.loadHistory(USER, "keep");
      assert.deepEqual(loaded.warnings, []);
      assert.equal(loaded.messages.length % 2, 0);
      for (let i = 0; i < loaded.messages.length; i += 2) {
        assert.equal(loaded.messages[i]?.role, "user");
        assert.deepEqual(loaded.messages[i + 1], { role: "assistant", content: DEMO_SENTENCE });
      }
      return loaded.messages.length / 2;
    };

    assert.equal(resultOf(await proc.request({ id: "c0", method: "chat", params: { session_id: "keep", input: "before" } }, 60_000)).response, DEMO_SENTENCE);
    assert.equal(await savedTurns(), 1);

    // Full to the last byte.
    const filler = path.join(mountDir, "filler");
    fill(filler);
    const full = await proc.request({ id: "c1", method: "chat", params: { session_id: "keep", input: "while full" } }, 60_000);
    assert.equal(full.type, "error", JSON.stringify(full));
    assert.equal(full.code, "storage_full", JSON.stringify(full));
    const details = full.details as { path: string; errno: string; config_key: string };
    assert.equal(details.errno, "ENOSPC");
    assert.equal(details.config_key, "app.data_dir");
    assert.ok(details.path.startsWith(path.join(dataDir, "sessions", USER, "keep")), details.path);
    assert.match(String(full.message), /no space left/);
    assert.ok(String(full.message).includes(details.path));
    assert.match(String(full.message), /Free some space there, or set app\.data_dir/);
    assert.deepEqual(await proc.request({ id: "p1", method: "ping" }), { id: "p1", type: "result", result: { status: "ok" } });
    const fresh = await proc.request({ id: "c2", method: "chat", params: { session_id: "fresh", input: "new session" } }, 60_000);
    assert.equal(fresh.code, "storage_full", JSON.stringify(fresh));
    assert.equal((await readdir(path.join(dataDir, "sessions", USER))).includes("fresh"), false, "a refused new session leaves no folder");
    assert.equal(await savedTurns(), 1);

    // A few pages free: the turn gets further before a write fails, or it fits. Either way the
    // answer is a result or storage_full, and the saved turns stay whole.
    const outcomes: Record<string, string> = {};
    let succeeded = 0;
    for (const pages of [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]) {
      fill(filler);
      freePages(filler, pages);
      const free = await freeBytes();
      const reply = await proc.request({ id: `k${pages}`, method: "chat", params: { session_id: "keep", input: `with ${pages} pages free` } }, 60_000);
      if (reply.type === "result") {
        const result = resultOf(reply);
        assert.equal(result.response, DEMO_SENTENCE);
        for (const warning of result.warnings) assert.match(warning, /discarded the unfinished turn/);
        succeeded += 1;
      } else assert.equal(reply.code, "storage_full", JSON.stringify(reply));
      outcomes[`${pages} (${free} B free)`] = reply.type === "result" ? "result" : String((reply.details as { path: string }).path).replace(dataDir, "data_dir");
      assert.equal(await savedTurns(), 1 + succeeded);
    }
    assert.deepEqual(await proc.request({ id: "p2", method: "ping" }), { id: "p2", type: "result", result: { status: "ok" } });

    // Room again but read-only: storage_error, the server keeps serving.
    await unlink(filler);
    assert.equal(spawnSync("mount", ["-o", "remount,ro", mountDir]).status, 0, "remount read-only");
    const readOnly = await proc.request({ id: "c3", method: "chat", params: { session_id: "keep", input: "read-only" } }, 60_000);
    assert.equal(spawnSync("mount", ["-o", "remount,rw", mountDir]).status, 0, "remount read-write");
    assert.equal(readOnly.code, "storage_error", JSON.stringify(readOnly));
    assert.equal((readOnly.details as { errno: string }).errno, "EROFS");
    assert.match(String(readOnly.message), /read-only/);
    assert.deepEqual(await proc.request({ id: "p3", method: "ping" }), { id: "p3", type: "result", result: { status: "ok" } });

    // Space back: the session loads and takes a turn.
    const back = resultOf(await proc.request({ id: "c4", method: "chat", params: { session_id: "keep", input: "space is back" } }, 60_000));
    assert.equal(back.response, DEMO_SENTENCE);
    for (const warning of back.warnings) assert.match(warning, /discarded the unfinished turn/);
    assert.equal(await savedTurns(), 2 + succeeded);
    assert.equal(resultOf(await proc.request({ id: "c5", method: "chat", params: { session_id: "fresh", input: "new session" } }, 60_000)).response, DEMO_SENTENCE);

    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0, proc.stderr.slice(-2000));
    assert.deepEqual(protocolViolations(proc), []);
    t.diagnostic(JSON.stringify({ tmpfs: "1 MiB", turns_that_fit: succeeded, outcomes }));
    await rm(configDir, { recursive: true, force: true });
  });
});
