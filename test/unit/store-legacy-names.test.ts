// Data dirs of earlier versions (folders named by the raw id): moved to their storeNames on the
// store's first use, once, under the old session lock; read through the new names afterwards.
import assert from "node:assert/strict";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { checkStoreNames } from "../../src/diagnostics/checks/store-names.js";
import { resolvePodSession } from "../../src/pod/pod-state-file.js";
import { FileSessionCatalog } from "../../src/store/file-session-catalog.js";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { MinisearchMemoryIndex } from "../../src/store/memory-index.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { deadPid, listTree, makeEntry, tempDataDir } from "../helpers/store-fixtures.js";

/** A session folder as an earlier version left it: `sessions/<raw user>/<raw session>/history.jsonl`. */
async function oldSession(dataDir: string, user: string, session: string, ...turns: number[]): Promise<void> {
  const dir = path.join(dataDir, "sessions", user, session);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "history.jsonl"), turns.map((n) => `${JSON.stringify(makeEntry(n, `question ${user}/${session} ${n}`))}\n`).join(""));
}

const questions = (messages: Array<{ role: string; content: unknown }>): unknown[] => messages.filter((m) => m.role === "user").map((m) => m.content);

describe("folders of earlier versions", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDataDir();
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it("are renamed to their storeNames on first use, each keeping its own history; plain lower-case ones stay", async () => {
    await oldSession(dataDir, "Alice", "S1", 1, 2);
    await oldSession(dataDir, "alice", "s1", 3);
    await oldSession(dataDir, "alice", "S1", 4);
    await oldSession(dataDir, "con", "x.", 5);
    await mkdir(path.join(dataDir, "memory", "Alice"), { recursive: true });
    await writeFile(path.join(dataDir, "memory", "Alice", "notes.md"), "# Alice\nlikes tea\n");
    const store = new FileSessionStore(dataDir);

    assert.deepEqual(questions((await store.loadHistory("Alice", "S1")).messages), ["question Alice/S1 1", "question Alice/S1 2"]);
    assert.deepEqual(await listTree(dataDir), [
      "memory",
      "memory/+alice",
      "memory/+alice/notes.md",
      "sessions",
      "sessions/+alice",
      "sessions/+alice/+s1",
      "sessions/+alice/+s1/history.jsonl",
      "sessions/alice",
      "sessions/alice/+s1",
      "sessions/alice/+s1/history.jsonl",
      "sessions/alice/s1",
      "sessions/alice/s1/history.jsonl",
      "sessions/con+",
      "sessions/con+/x.+",
      "sessions/con+/x.+/history.jsonl",
    ]);
    assert.deepEqual(questions((await store.loadHistory("alice", "s1")).messages), ["question alice/s1 3"]);
    assert.deepEqual(questions((await store.loadHistory("alice", "S1")).messages), ["question alice/S1 4"]);
    assert.deepEqual(questions((await store.loadHistory("con", "x.")).messages), ["question con/x. 5"]);
    // The wire keeps the exact ids.
    assert.deepEqual((await store.listSessions("alice")).sort(), ["S1", "s1"]);
    assert.deepEqual(await store.listSessions("Alice"), ["S1"]);
    // Memory finds Alice's notes under the new name, and only Alice's turns.
    const memory = new MinisearchMemoryIndex(dataDir, store);
    await memory.ensureUser("Alice");
    assert.deepEqual(memory.search("Alice", "tea", 100).map((snippet) => snippet.source), ["note:notes.md#1"]);
    assert.deepEqual(memory.search("Alice", "question", 1000).map((snippet) => snippet.source).sort(), [
      `session:S1@${makeEntry(1).at}`,
      `session:S1@${makeEntry(2).at}`,
    ]);
  });

  it("a second start finds nothing to do (idempotent), and a new turn goes to the new folder", async () => {
    await oldSession(dataDir, "Bob", "T", 1);
    await new FileSessionStore(dataDir).listSessions("Bob");
    const before = await listTree(dataDir);
    const again = new FileSessionStore(dataDir);
    await again.withSessionLock("Bob", "T", () => again.appendTurn("Bob", "T", makeEntry(2)));
    assert.deepEqual(await listTree(dataDir), before);
    assert.deepEqual(questions((await again.loadHistory("Bob", "T")).messages), ["question Bob/T 1", "question 2"]);
  });

  it("a crash half-way (some folders moved, a stale lock of a dead process left in an old one) is finished by the next start", async () => {
    await oldSession(dataDir, "Carol", "A", 1);
    await mkdir(path.join(dataDir, "sessions", "+carol", "+b"), { recursive: true });
    await writeFile(path.join(dataDir, "sessions", "+carol", "+b", "history.jsonl"), `${JSON.stringify(makeEntry(2))}\n`);
    const lock = { pid: await deadPid(), hostname: hostname(), acquired_at: new Date().toISOString(), token: "old" };
    await writeFile(path.join(dataDir, "sessions", "Carol", "A", "session.lock"), JSON.stringify(lock));
    const store = new FileSessionStore(dataDir);
    assert.deepEqual((await store.listSessions("Carol")).sort(), ["A", "B"]);
    assert.deepEqual(await listTree(path.join(dataDir, "sessions")), ["+carol", "+carol/+a", "+carol/+a/history.jsonl", "+carol/+b", "+carol/+b/history.jsonl"]);
  });

  it("two stores (two processes) starting at once move each folder once and both read it", async () => {
    for (let n = 0; n < 20; n += 1) await oldSession(dataDir, "Dave", `S${n}`, n);
    const [one, two] = [new FileSessionStore(dataDir), new FileSessionStore(dataDir)];
    const [a, b] = await Promise.all([one.listSessions("Dave"), two.listSessions("Dave")]);
    assert.equal(a.length, 20);
    assert.deepEqual(a.sort(), b.sort());
    const tree = await listTree(path.join(dataDir, "sessions"));
    assert.deepEqual(tree.filter((entry) => !entry.startsWith("+dave")), []);
    assert.equal(tree.filter((entry) => entry.endsWith("history.jsonl")).length, 20);
    assert.ok(!tree.some((entry) => entry.endsWith("session.lock")), tree.join(" "));
    assert.deepEqual(questions((await two.loadHistory("Dave", "S7")).messages), ["question Dave/S7 7"]);
  });

  it("when both the old and the new name exist, the new one is used and the old one left in place (logged)", async () => {
    await oldSession(dataDir, "Erin", "S", 1);
    await mkdir(path.join(dataDir, "sessions", "+erin", "+s"), { recursive: true });
    await writeFile(path.join(dataDir, "sessions", "+erin", "+s", "history.jsonl"), `${JSON.stringify(makeEntry(2))}\n`);
    const { logger, records } = captureLogger();
    const store = new FileSessionStore(dataDir, { logger });
    assert.deepEqual(questions((await store.loadHistory("Erin", "S")).messages), ["question 2"]);
    assert.equal(await readFile(path.join(dataDir, "sessions", "Erin", "S", "history.jsonl"), "utf8").then((text) => text.length > 0), true);
    assert.ok(records().some((record) => record["level"] === 40 && String(record["msg"]).includes("both the old and the new name")));
  });

  it("the session catalog (ACP) finds a session of an earlier version before anything else touched the store", async () => {
    await oldSession(dataDir, "acp_user", "Sess", 1);
    const store = new FileSessionStore(dataDir);
    const catalog = new FileSessionCatalog(dataDir, store);
    assert.equal(await catalog.exists("acp_user", "Sess"), true);
    assert.equal(await catalog.exists("acp_user", "sess"), false);
  });

  it("doctor's check names a pair that collides case-insensitively, and is ok once the store has renamed them", async () => {
    await oldSession(dataDir, "Alice", "s1", 1);
    await oldSession(dataDir, "alice", "s1", 2);
    await oldSession(dataDir, "bob", "S2", 3);
    await oldSession(dataDir, "bob", "s2.", 4);
    const before = await checkStoreNames(dataDir);
    assert.equal(before.status, "warn");
    assert.deepEqual(before.data?.["collisions"], [["sessions/Alice", "sessions/alice"], ["sessions/bob/S2", "sessions/bob/s2."]]);
    assert.match(before.finding, /sessions\/Alice and sessions\/alice/);
    assert.equal(before.data?.["legacy_count"], 3);
    await new FileSessionStore(dataDir).listSessions("bob");
    const after = await checkStoreNames(dataDir);
    assert.equal(after.status, "ok", after.finding);
    assert.equal(after.data?.["legacy_count"], 0);
  });
});

describe("pod state files of earlier versions", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDataDir();
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it("`pods/<raw name>.json` naming this pod is carried over to the new name", async () => {
    await mkdir(path.join(dataDir, "pods"));
    await writeFile(path.join(dataDir, "pods", "Dev.json"), JSON.stringify({ session_id: "kept", pod_name: "Dev" }));
    const resolved = await resolvePodSession(dataDir, "Dev", undefined);
    assert.deepEqual(resolved, { sessionId: "kept", file: path.join(dataDir, "pods", "+dev.json"), created: false });
    assert.deepEqual(await listTree(path.join(dataDir, "pods")), ["+dev.json"]);
    assert.equal((await resolvePodSession(dataDir, "Dev", undefined)).sessionId, "kept");
  });

  it("another pod's file is never taken: not `dev.json` for `Dev`, nor a file naming another pod", async () => {
    await mkdir(path.join(dataDir, "pods"));
    await writeFile(path.join(dataDir, "pods", "dev.json"), JSON.stringify({ session_id: "lower", pod_name: "dev" }));
    await writeFile(path.join(dataDir, "pods", "Ops.json"), JSON.stringify({ session_id: "other", pod_name: "ops" }));
    const dev = await resolvePodSession(dataDir, "Dev", undefined);
    assert.notEqual(dev.sessionId, "lower");
    assert.equal(dev.created, true);
    assert.notEqual((await resolvePodSession(dataDir, "Ops", undefined)).sessionId, "other");
    assert.equal((await resolvePodSession(dataDir, "dev", undefined)).sessionId, "lower");
  });
});
