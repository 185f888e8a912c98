import assert from "node:assert/strict";
import { mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { MinisearchMemoryIndex } from "../../src/store/memory-index.js";
import { assertInside, sessionPaths, userNotesDir } from "../../src/store/session-paths.js";
import { listTree, makeCheckpoint, makeEntry, tempDataDir } from "../helpers/store-fixtures.js";

const HOSTILE = ["../x", "..", "a/b", "a\\b", ".hidden", "", "x".repeat(65), "a\0b", "/etc", "ok/../../x"];

function isInvalidRequest(error: unknown): boolean {
  return error instanceof RuntimeError && error.code === "invalid_request";
}

describe("hostile ids", () => {
  let root: string;
  let dataDir: string;
  beforeEach(async () => {
    root = await tempDataDir();
    dataDir = path.join(root, "data");
    await mkdir(dataDir);
  });
  afterEach(async () => rm(root, { recursive: true, force: true }));

  it("are rejected by every store method with invalid_request, creating nothing", async () => {
    const store = new FileSessionStore(dataDir);
    // Thunks, so each call starts only when its rejection is awaited.
    const calls = (user: string, session: string): Array<() => Promise<unknown>> => [
      () => store.loadHistory(user, session),
      () => store.appendTurn(user, session, makeEntry(1)),
      () => store.readCheckpoint(user, session),
      () => store.writeCheckpoint(user, session, makeCheckpoint(1)),
      () => store.clearCheckpoint(user, session),
      () => store.withSessionLock(user, session, async () => assert.fail("must not run")),
      () => store.readTurns(user, session),
    ];
    for (const id of HOSTILE) {
      for (const call of [...calls(id, "s1"), ...calls("u1", id), () => store.listSessions(id)]) {
        await assert.rejects(call, isInvalidRequest, `id ${JSON.stringify(id)}`);
      }
    }
    assert.deepEqual(await listTree(dataDir), []);
    assert.deepEqual(await readdir(root), ["data"]);
  });

  it("are rejected by the memory index", async () => {
    const memory = new MinisearchMemoryIndex(dataDir, new FileSessionStore(dataDir));
    for (const id of HOSTILE) await assert.rejects(memory.ensureUser(id), isInvalidRequest);
    assert.deepEqual(memory.search("../x", "anything", 100), []);
    assert.deepEqual(await listTree(dataDir), []);
  });

  it("the accepted ids map to folders inside data_dir", () => {
    const paths = sessionPaths(dataDir, "user_1", "session-2.a");
    assert.equal(paths.dir, path.join(dataDir, "sessions", "user_1", "session-2.a"));
    assert.equal(paths.history, path.join(paths.dir, "history.jsonl"));
    assert.equal(userNotesDir(dataDir, "u"), path.join(dataDir, "memory", "u"));
    assert.throws(() => assertInside(dataDir, path.join(dataDir, "..", "x")), isInvalidRequest);
    assert.throws(() => assertInside(dataDir, "/elsewhere"), isInvalidRequest);
    assert.equal(assertInside(dataDir, path.join(dataDir, "a")), path.join(dataDir, "a"));
  });
});
