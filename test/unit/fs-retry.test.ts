// Retries for the EPERM/EBUSY/EACCES that antivirus and indexers cause on Windows: a rename that
// fails twice then works is invisible to the caller; one that fails for good ends as the
// storage_error of the file, after a bounded wait.
import assert from "node:assert/strict";
import { rename, readFile, readdir, writeFile, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { FS_RETRY_DELAYS_MS, retryTransient } from "../../src/shared/fs-retry.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { writeFileAtomic } from "../../src/store/atomic-file.js";
import { storing } from "../../src/store/storage-error.js";

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: operation failed`), { code });

/** A rename that throws `code` for its first `failures` calls (Infinity: always), then renames. */
function flakyRename(code: string, failures: number): { rename: (from: string, to: string) => Promise<void>; calls: () => number } {
  let calls = 0;
  return {
    rename: (from, to) => {
      calls++;
      return calls <= failures ? Promise.reject(errno(code)) : rename(from, to);
    },
    calls: () => calls,
  };
}

test("an atomic write whose rename fails with EPERM twice then works: the new bytes, no temp file left", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "local-ai-retry-"));
  const target = path.join(dir, "checkpoint.json");
  await writeFile(target, "old");
  const fake = flakyRename("EPERM", 2);
  await writeFileAtomic(target, "new", { rename: fake.rename });
  assert.equal(fake.calls(), 3);
  assert.equal(await readFile(target, "utf8"), "new");
  assert.deepEqual(await readdir(dir), ["checkpoint.json"]);
});

test("EPERM forever: storage_error naming the file after the bounded retries; the old bytes stay, no temp file", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "local-ai-retry-"));
  const target = path.join(dir, "checkpoint.json");
  await writeFile(target, "old");
  const fake = flakyRename("EPERM", Number.POSITIVE_INFINITY);
  const started = Date.now();
  const error = await storing(target, () => writeFileAtomic(target, "new", { rename: fake.rename })).then(
    () => assert.fail("the write succeeded"),
    (caught: unknown) => caught,
  );
  const waited = Date.now() - started;
  assert.ok(error instanceof RuntimeError);
  assert.equal(error.code, "storage_error");
  assert.ok(error.message.startsWith(`Could not write ${target}: operation not permitted (EPERM)`), error.message);
  assert.deepEqual(error.details, { path: target, errno: "EPERM", config_key: "app.data_dir" });
  assert.equal(fake.calls(), FS_RETRY_DELAYS_MS.length + 1);
  const budget = FS_RETRY_DELAYS_MS.reduce((sum, ms) => sum + ms, 0);
  assert.ok(waited >= budget && waited < 5000, `waited ${waited} ms (retry budget ${budget} ms)`);
  assert.equal(await readFile(target, "utf8"), "old");
  assert.deepEqual(await readdir(dir), ["checkpoint.json"]);
});

test("EBUSY and EACCES are retried too; other errors (ENOSPC, ENOENT) are not", async () => {
  for (const code of ["EBUSY", "EACCES"]) {
    let calls = 0;
    const waits: number[] = [];
    const value = await retryTransient(
      () => (++calls < 3 ? Promise.reject(errno(code)) : Promise.resolve("done")),
      { sleep: (ms) => Promise.resolve(void waits.push(ms)) },
    );
    assert.equal(value, "done");
    assert.deepEqual(waits, FS_RETRY_DELAYS_MS.slice(0, 2));
  }
  for (const code of ["ENOSPC", "ENOENT"]) {
    let calls = 0;
    await assert.rejects(
      retryTransient(() => {
        calls++;
        return Promise.reject(errno(code));
      }, { sleep: () => Promise.resolve() }),
      { code },
    );
    assert.equal(calls, 1);
  }
});
