import assert from "node:assert/strict";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { ensureDir, isTempFor, tempPathFor, writeFileAtomic, writeNewFile } from "../../src/store/atomic-file.js";
import { tempDataDir } from "../helpers/store-fixtures.js";

describe("writeFileAtomic", () => {
  let dir: string;
  beforeEach(async () => (dir = await tempDataDir()));
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it("writes the whole content and leaves no temp file", async () => {
    const target = path.join(dir, "state.json");
    const big = "x".repeat(3 * 1024 * 1024);
    await writeFileAtomic(target, big);
    assert.equal(await readFile(target, "utf8"), big);
    assert.deepEqual(await readdir(dir), ["state.json"]);
  });

  it("replaces an existing file", async () => {
    const target = path.join(dir, "state.json");
    await writeFileAtomic(target, "old");
    await writeFileAtomic(target, "new");
    assert.equal(await readFile(target, "utf8"), "new");
    assert.deepEqual(await readdir(dir), ["state.json"]);
  });

  it("keeps the old file when it fails before the rename, and removes the temp file", async () => {
    const target = path.join(dir, "state.json");
    await writeFileAtomic(target, "old");
    let tempSeen = "";
    await assert.rejects(
      writeFileAtomic(target, "new content", {
        beforeRename: async (temp) => {
          tempSeen = await readFile(temp, "utf8");
          // This is the state a crash here would leave: the target still holds the old bytes.
          assert.equal(await readFile(target, "utf8"), "old");
          throw new Error("simulated crash");
        },
      }),
      /simulated crash/,
    );
    assert.equal(tempSeen, "new content");
    assert.equal(await readFile(target, "utf8"), "old");
    assert.deepEqual(await readdir(dir), ["state.json"]);
  });

  it("fails cleanly when the folder is missing", async () => {
    await assert.rejects(writeFileAtomic(path.join(dir, "missing", "f"), "x"), { code: "ENOENT" });
  });

  it("names temp files so a crash's leftovers can be recognised", () => {
    const temp = path.basename(tempPathFor(path.join(dir, "checkpoint.json")));
    assert.ok(isTempFor("checkpoint.json", temp));
    assert.ok(!isTempFor("checkpoint.json", "checkpoint.json"));
    assert.ok(!isTempFor("history.jsonl", temp));
  });
});

describe("ensureDir and writeNewFile", () => {
  let dir: string;
  beforeEach(async () => (dir = await tempDataDir()));
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it("creates nested folders and accepts existing ones", async () => {
    const nested = path.join(dir, "a", "b", "c");
    await ensureDir(nested);
    await ensureDir(nested);
    assert.ok((await stat(nested)).isDirectory());
  });

  it("never overwrites: a taken name gets a suffix", async () => {
    await mkdir(path.join(dir, "x"), { recursive: true });
    const target = path.join(dir, "x", "copy");
    await writeFile(target, "first");
    const written = await writeNewFile(target, "second");
    assert.equal(written, `${target}-2`);
    assert.equal(await readFile(target, "utf8"), "first");
    assert.equal(await readFile(written, "utf8"), "second");
  });
});
