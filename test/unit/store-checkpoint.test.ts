import assert from "node:assert/strict";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { tempPathFor, writeFileAtomic } from "../../src/store/atomic-file.js";
import { FileSessionStore } from "../../src/store/file-session-store.js";
import { sessionPaths } from "../../src/store/session-paths.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { makeCheckpoint, makeEntry, tempDataDir } from "../helpers/store-fixtures.js";

const USER = "u1";
const SESSION = "s1";

describe("session checkpoint", () => {
  let dataDir: string;
  let store: FileSessionStore;
  let file: string;
  beforeEach(async () => {
    dataDir = await tempDataDir();
    store = new FileSessionStore(dataDir);
    file = sessionPaths(dataDir, USER, SESSION).checkpoint;
  });
  afterEach(async () => rm(dataDir, { recursive: true, force: true }));

  it("writes, reads back, overwrites and clears", async () => {
    assert.equal(await store.readCheckpoint(USER, SESSION), null);
    await store.writeCheckpoint(USER, SESSION, makeCheckpoint(1, "a"));
    assert.deepEqual(await store.readCheckpoint(USER, SESSION), makeCheckpoint(1, "a"));
    const paused = { ...makeCheckpoint(2, "b"), status: "paused" as const, pending: { call: { id: "c1", name: "write_file", arguments: "{}" }, args: {}, server: "files" } };
    await store.writeCheckpoint(USER, SESSION, paused);
    assert.deepEqual(await store.readCheckpoint(USER, SESSION), paused);
    await store.clearCheckpoint(USER, SESSION);
    assert.equal(await store.readCheckpoint(USER, SESSION), null);
    await store.clearCheckpoint(USER, SESSION); // clearing twice is fine
    await store.clearCheckpoint(USER, "never-used");
    assert.deepEqual(await readdir(path.dirname(file)), []);
  });

  it("is never torn: a crash between the temp write and the rename leaves the old checkpoint", async () => {
    await store.writeCheckpoint(USER, SESSION, makeCheckpoint(1, "old"));
    await assert.rejects(
      writeFileAtomic(file, JSON.stringify(makeCheckpoint(2, "new")), {
        beforeRename: async () => {
          // The moment of the crash: a reader (the next process) sees the old checkpoint whole.
          assert.deepEqual(await store.readCheckpoint(USER, SESSION), makeCheckpoint(1, "old"));
          throw new Error("crash");
        },
      }),
      /crash/,
    );
    assert.deepEqual(await store.readCheckpoint(USER, SESSION), makeCheckpoint(1, "old"));
  });

  it("ignores a crash's half-written temp file, and clearCheckpoint removes it", async () => {
    await store.writeCheckpoint(USER, SESSION, makeCheckpoint(1, "old"));
    const leftover = tempPathFor(file);
    await writeFile(leftover, JSON.stringify(makeCheckpoint(2, "new")).slice(0, 40));
    assert.deepEqual(await store.readCheckpoint(USER, SESSION), makeCheckpoint(1, "old"));
    await store.writeCheckpoint(USER, SESSION, makeCheckpoint(3, "newer"));
    assert.deepEqual(await store.readCheckpoint(USER, SESSION), makeCheckpoint(3, "newer"));
    await store.clearCheckpoint(USER, SESSION);
    assert.deepEqual(await readdir(path.dirname(file)), []);
  });

  it("sets aside a damaged checkpoint with a warning and reads null", async () => {
    const { logger, records } = captureLogger();
    const fixed = new Date(Date.UTC(2024, 5, 1));
    store = new FileSessionStore(dataDir, { logger, now: () => fixed });
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{"version": 1, "trace_id": ');
    assert.equal(await store.readCheckpoint(USER, SESSION), null);
    const names = await readdir(path.dirname(file));
    assert.equal(names.length, 1);
    assert.match(names[0] ?? "", /^checkpoint\.json\.corrupt-/);
    assert.ok(records().some((record) => record.level === 40 && String(record.msg).includes("checkpoint")));
    // A checkpoint of an unknown version is not trusted either; the earlier copy is not replaced.
    await writeFile(file, JSON.stringify({ ...makeCheckpoint(1), version: 2 }));
    assert.equal(await store.readCheckpoint(USER, SESSION), null);
    assert.equal((await readdir(path.dirname(file))).filter((name) => name.startsWith("checkpoint.json.corrupt-")).length, 2);
  });

  it("a checkpoint whose turn is already the history's last entry (killed before it was removed) is not resumable", async () => {
    const checkpoint = makeCheckpoint(1, "done");
    await store.appendTurn(USER, SESSION, makeEntry(1));
    await store.writeCheckpoint(USER, SESSION, checkpoint);
    assert.deepEqual(await store.readCheckpoint(USER, SESSION), checkpoint, "another turn last: resumable");
    await store.appendTurn(USER, SESSION, { ...makeEntry(2), trace_id: checkpoint.trace_id });
    assert.equal(await store.readCheckpoint(USER, SESSION), null, "its own turn last: finished, nothing to resume");
    assert.ok((await readdir(path.dirname(file))).includes("checkpoint.json"), "reading never deletes it (the next turn replaces it)");
    // The turn's append torn by a kill: the turn is not saved, so it resumes.
    const history = sessionPaths(dataDir, USER, SESSION).history;
    await writeFile(history, `${JSON.stringify(makeEntry(1))}\n${JSON.stringify({ ...makeEntry(2), trace_id: checkpoint.trace_id }).slice(0, 30)}`);
    assert.deepEqual(await store.readCheckpoint(USER, SESSION), checkpoint);
  });
});
