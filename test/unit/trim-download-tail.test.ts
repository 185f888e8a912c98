// A finished download longer than the server advertised is cut back (ipull's progress JSON after
// the last byte, when a save races with its own cut); a file of the right size, or shorter, or of
// an unknown size is left alone.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { trimDownloadTail } from "../../src/models/trim-download-tail.js";

test("cuts the tail past the advertised size and nothing else", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "local-ai-trim-"));
  try {
    const model = Buffer.from("GGUF-model-bytes");
    const tail = Buffer.from(JSON.stringify({ part: 0, chunks: [true], size: model.length }));
    const files = { long: path.join(dir, "long.gguf"), exact: path.join(dir, "exact.gguf"), short: path.join(dir, "short.gguf"), unknown: path.join(dir, "unknown.gguf") };
    await writeFile(files.long, Buffer.concat([model, tail]));
    await writeFile(files.exact, model);
    await writeFile(files.short, model.subarray(0, 4));
    await writeFile(files.unknown, Buffer.concat([model, tail]));
    const trimmed = await trimDownloadTail([
      { path: files.long, advertisedBytes: model.length },
      { path: files.exact, advertisedBytes: model.length },
      { path: files.short, advertisedBytes: model.length },
      { path: files.unknown, advertisedBytes: undefined },
      { path: path.join(dir, "missing.gguf"), advertisedBytes: 3 },
    ]);
    assert.deepEqual(trimmed, [files.long]);
    assert.deepEqual(await readFile(files.long), model);
    assert.deepEqual(await readFile(files.exact), model);
    assert.equal((await readFile(files.short)).length, 4);
    assert.equal((await readFile(files.unknown)).length, model.length + tail.length);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
