import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { storing, toStorageError } from "../../src/store/storage-error.js";

const fsError = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: failed`), { code });

describe("store write failures as storage errors", () => {
  it("no space (ENOSPC, EDQUOT) is storage_full naming the file and the fix", () => {
    for (const errno of ["ENOSPC", "EDQUOT"]) {
      const error = toStorageError(fsError(errno), "/data/sessions/u/s/history.jsonl");
      assert.ok(error instanceof RuntimeError);
      assert.equal(error.code, "storage_full");
      assert.deepEqual(error.details, { path: "/data/sessions/u/s/history.jsonl", errno, config_key: "app.data_dir" });
      assert.match(error.message, /^Could not write \/data\/sessions\/u\/s\/history\.jsonl: no space left on its disk/);
      assert.match(error.message, /Free some space there, or set app\.data_dir/);
    }
  });

  it("a read-only, forbidden or failing disk is storage_error saying why", () => {
    for (const [errno, reason] of [["EROFS", /read-only/], ["EACCES", /permission denied/], ["EPERM", /not permitted/], ["EIO", /I\/O error/], ["EFBIG", /ulimit -f/]] as const) {
      const error = toStorageError(fsError(errno), "/d/f");
      assert.ok(error instanceof RuntimeError, errno);
      assert.equal(error.code, "storage_error");
      assert.equal(error.details?.errno, errno);
      assert.match(error.message, reason);
    }
  });

  it("anything else passes unchanged: other errnos, RuntimeErrors (a cancelled wait), non-errors", async () => {
    const other = fsError("EMFILE");
    assert.equal(toStorageError(other, "/d/f"), other);
    const cancelled = new RuntimeError("cancelled", "Cancelled while waiting for the session lock");
    assert.equal(toStorageError(cancelled, "/d/f"), cancelled);
    assert.equal(toStorageError("text", "/d/f"), "text");
    await assert.rejects(storing("/d/f", () => Promise.reject(fsError("ENOSPC"))), (e: unknown) => e instanceof RuntimeError && e.code === "storage_full");
    assert.equal(await storing("/d/f", () => Promise.resolve(7)), 7);
  });
});
