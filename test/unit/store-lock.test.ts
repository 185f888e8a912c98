import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { access, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { delay } from "../../src/shared/abort.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { sessionPaths } from "../../src/store/session-paths.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { deadPid, tempDataDir } from "../helpers/store-fixtures.js";

const HOLDER = fileURLToPath(new URL("../helpers/store-lock-holder.js", import.meta.url));

function isCancelled(error: unknown): boolean {
  return error instanceof RuntimeError && error.code === "cancelled";
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

describe("withSessionLock", () => {
  let dataDir: string;
  let store: FileSessionStore;
  let lockFile: string;
  beforeEach(async () => {
    dataDir = await tempDataDir();
    store = new FileSessionStore(dataDir);
    lockFile = sessionPaths(dataDir, "u1", "s1").lock;
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it("runs turns on one session one at a time, in arrival order", async () => {
    const log: string[] = [];
    let inside = 0;
    const turn = (name: string, ms: number) => async (): Promise<string> => {
      inside += 1;
      assert.equal(inside, 1, "two turns overlapped");
      log.push(`${name}:start`);
      // The turn's duration (so turns would overlap without the lock), not a synchronization.
      await delay(ms);
      log.push(`${name}:end`);
      inside -= 1;
      return name;
    };
    const results = await Promise.all([
      store.withSessionLock("u1", "s1", turn("a", 40)),
      store.withSessionLock("u1", "s1", turn("b", 5)),
      store.withSessionLock("u1", "s1", turn("c", 20)),
    ]);
    assert.deepEqual(results, ["a", "b", "c"]);
    assert.deepEqual(log, ["a:start", "a:end", "b:start", "b:end", "c:start", "c:end"]);
    assert.equal(await exists(lockFile), false, "lock file removed after the last turn");
  });

  it("lets different sessions run at the same time", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // s1 waits for s2 to open the gate: this deadlocks if sessions were serialized together.
    const first = store.withSessionLock("u1", "s1", async () => gate);
    const second = store.withSessionLock("u1", "s2", async () => release());
    // The delay only bounds the deadlock this test would otherwise hang on.
    const done = await Promise.race([Promise.all([first, second]).then(() => true), delay(2000).then(() => false)]);
    assert.ok(done, "sessions blocked each other");
  });

  it("releases the lock when fn throws, and passes the error on", async () => {
    await assert.rejects(store.withSessionLock("u1", "s1", async () => Promise.reject(new Error("boom"))), /boom/);
    assert.equal(await exists(lockFile), false);
    assert.equal(await store.withSessionLock("u1", "s1", async () => "next"), "next");
  });

  it("an abort while queued in process answers cancelled and keeps the queue in order", async () => {
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const holder = store.withSessionLock("u1", "s1", async () => {
      await gate;
      log.push("holder");
    });
    const controller = new AbortController();
    const aborted = store.withSessionLock("u1", "s1", async () => log.push("aborted ran"), controller.signal);
    const third = store.withSessionLock("u1", "s1", async () => log.push("third"));
    controller.abort();
    await assert.rejects(aborted, isCancelled);
    assert.deepEqual(log, []);
    release();
    await Promise.all([holder, third]);
    assert.deepEqual(log, ["holder", "third"]);
  });

  it("an already-aborted signal is cancelled before anything runs", async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(store.withSessionLock("u1", "s1", async () => assert.fail("ran"), controller.signal), isCancelled);
  });

  it("waits for a live holder's lock file; an abort then answers cancelled and leaves it alone", async () => {
    await store.withSessionLock("u1", "s1", async () => undefined); // creates the session folder
    const foreign = JSON.stringify({ pid: process.pid, hostname: hostname(), acquired_at: new Date().toISOString(), token: "other" });
    await writeFile(lockFile, foreign);
    const started = Date.now();
    await assert.rejects(store.withSessionLock("u1", "s1", async () => assert.fail("ran"), AbortSignal.timeout(300)), isCancelled);
    assert.ok(Date.now() - started >= 250);
    assert.equal(await readFile(lockFile, "utf8"), foreign);
  });

  it("breaks a stale lock left by a dead process on this host", async () => {
    const { logger, records } = captureLogger();
    store = new FileSessionStore(dataDir, { logger });
    await store.withSessionLock("u1", "s1", async () => undefined);
    await writeFile(lockFile, JSON.stringify({ pid: await deadPid(), hostname: hostname(), acquired_at: new Date().toISOString(), token: "dead" }));
    const value = await store.withSessionLock("u1", "s1", async () => "ran", AbortSignal.timeout(2000));
    assert.equal(value, "ran");
    assert.equal(await exists(lockFile), false);
    assert.ok(records().some((record) => record.msg === "broke a stale session lock"));
  });

  it("breaks another host's lock only once it is older than the stale bound", async () => {
    store = new FileSessionStore(dataDir, { lock: { staleMs: 60_000 } });
    await store.withSessionLock("u1", "s1", async () => undefined);
    await writeFile(lockFile, JSON.stringify({ pid: 1, hostname: "elsewhere.example", acquired_at: new Date().toISOString(), token: "far" }));
    await assert.rejects(store.withSessionLock("u1", "s1", async () => "ran", AbortSignal.timeout(200)), isCancelled);
    const old = new Date(Date.now() - 120_000);
    await utimes(lockFile, old, old);
    assert.equal(await store.withSessionLock("u1", "s1", async () => "ran", AbortSignal.timeout(2000)), "ran");
  });

  it("breaks an unreadable lock file once it is old enough", async () => {
    await store.withSessionLock("u1", "s1", async () => undefined);
    await writeFile(lockFile, "");
    await assert.rejects(store.withSessionLock("u1", "s1", async () => "ran", AbortSignal.timeout(200)), isCancelled);
    const old = new Date(Date.now() - 60_000);
    await utimes(lockFile, old, old);
    assert.equal(await store.withSessionLock("u1", "s1", async () => "ran", AbortSignal.timeout(2000)), "ran");
  });

  it("excludes another process: our turn starts only after the child released the lock", async () => {
    const outFile = path.join(dataDir, "child-times.json");
    const child = spawn(process.execPath, [HOLDER, dataDir, "u1", "s1", "500", outFile], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString("utf8").includes("locked")) resolve();
      });
      child.on("exit", () => reject(new Error(`child exited before locking: ${stderr}`)));
    });
    const ourStart = await store.withSessionLock("u1", "s1", async () => Date.now(), AbortSignal.timeout(15_000));
    assert.equal(await exited, 0, stderr);
    const times = JSON.parse(await readFile(outFile, "utf8")) as { start: number; end: number };
    assert.ok(times.end - times.start >= 490, "the child held the lock ~500 ms");
    assert.ok(ourStart >= times.end, `our turn started at ${ourStart}, before the child released at ${times.end}`);
  });
});
