import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { readGgufHeader } from "../../src/engine/gguf/read-gguf-header.js";
import { isRuntimeError } from "../../src/shared/runtime-error.js";

/** magic, uint32 version, uint64 tensor count, uint64 metadata count: all little-endian. */
function header(version: number, tensors: bigint, kvs: bigint): Buffer {
  const buffer = Buffer.alloc(24);
  buffer.write("GGUF", 0, "latin1");
  buffer.writeUInt32LE(version, 4);
  buffer.writeBigUInt64LE(tensors, 8);
  buffer.writeBigUInt64LE(kvs, 16);
  return buffer;
}

describe("readGgufHeader", () => {
  let dir = "";
  const file = (name: string): string => path.join(dir, name);

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "gguf-header-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function expectProblem(target: string, reason: string, pattern: RegExp): Promise<void> {
    await assert.rejects(readGgufHeader(target), (error: unknown) => {
      assert.ok(isRuntimeError(error), "a RuntimeError");
      assert.equal(error.code, "model_missing");
      assert.equal(error.details?.reason, reason);
      assert.equal(error.details?.path, target);
      assert.match(error.message, pattern);
      return true;
    });
  }

  it("reads a v3 header and the file size, ignoring everything after 24 bytes", async () => {
    const bytes = Buffer.concat([header(3, 291n, 24n), Buffer.alloc(1000, 7)]);
    await writeFile(file("v3.gguf"), bytes);
    assert.deepEqual(await readGgufHeader(file("v3.gguf")), { version: 3, tensorCount: 291n, metadataCount: 24n, fileSize: 1024 });
  });

  it("accepts v2 and a header-only file", async () => {
    await writeFile(file("v2.gguf"), header(2, 0n, 0n));
    const result = await readGgufHeader(file("v2.gguf"));
    assert.equal(result.version, 2);
    assert.equal(result.fileSize, 24);
  });

  it("reads 64-bit counts beyond 2^32", async () => {
    await writeFile(file("big.gguf"), header(3, 2n ** 40n + 5n, 1n));
    assert.equal((await readGgufHeader(file("big.gguf"))).tensorCount, 2n ** 40n + 5n);
  });

  it("names a missing file", async () => {
    await expectProblem(file("nope.gguf"), "missing", /no file at .*nope\.gguf/);
  });

  it("names a directory", async () => {
    await mkdir(file("a-dir.gguf"));
    await expectProblem(file("a-dir.gguf"), "not_a_file", /directory|not a regular file/);
  });

  it("rejects wrong magic and shows the bytes found", async () => {
    await writeFile(file("weights.bin"), Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(60)]));
    await expectProblem(file("weights.bin"), "bad_magic", /not a GGUF file: it starts with bytes 50 4b 03 04/);
  });

  it("recognises a Git LFS pointer and an HTML page", async () => {
    await writeFile(file("lfs.gguf"), "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n");
    await expectProblem(file("lfs.gguf"), "bad_magic", /Git LFS pointer/);
    await writeFile(file("page.gguf"), "<!DOCTYPE html><html><body>Sign in</body></html>");
    await expectProblem(file("page.gguf"), "bad_magic", /HTML page/);
  });

  it("rejects a truncated header and an empty file", async () => {
    await writeFile(file("short.gguf"), header(3, 1n, 1n).subarray(0, 13));
    await expectProblem(file("short.gguf"), "too_short", /too short .*13 bytes/);
    await writeFile(file("empty.gguf"), "");
    await expectProblem(file("empty.gguf"), "too_short", /0 bytes/);
  });

  it("rejects unsupported versions, and says when the byte order is wrong", async () => {
    await writeFile(file("v1.gguf"), header(1, 1n, 1n));
    await expectProblem(file("v1.gguf"), "unsupported_version", /version 1.*supported versions are 2 and 3/);
    await writeFile(file("v9.gguf"), header(9, 1n, 1n));
    await expectProblem(file("v9.gguf"), "unsupported_version", /version 9/);
    const bigEndian = header(3, 1n, 1n);
    bigEndian.writeUInt32BE(3, 4);
    await writeFile(file("be.gguf"), bigEndian);
    await expectProblem(file("be.gguf"), "unsupported_version", /big-endian/);
  });
});
