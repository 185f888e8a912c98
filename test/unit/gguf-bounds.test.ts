// checkGgufBounds on crafted headers: each bound refuses a header that lies about its size before
// reading what it claims, and a real header passes with the layout node-llama-cpp reads.
import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { describe, it } from "node:test";
import { checkGgufBounds, GGUF_BOUNDS, GgufHeaderEnded, type GgufByteSource } from "../../src/engine/gguf/gguf-bounds.js";
import { checkGgufFile } from "../../src/engine/gguf/check-gguf-file.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

const u32 = (value: number): Buffer => Buffer.from(new Uint32Array([value]).buffer);
const u64 = (value: bigint): Buffer => {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64LE(value);
  return buffer;
};
const str = (text: string): Buffer => Buffer.concat([u64(BigInt(Buffer.byteLength(text))), Buffer.from(text)]);
const head = (tensors: bigint, keys: bigint): Buffer => Buffer.concat([Buffer.from("GGUF"), u32(3), u64(tensors), u64(keys)]);

/** A source over `bytes` that counts what was asked of it. */
function source(bytes: Buffer): GgufByteSource & { asked: number } {
  const self = {
    asked: 0,
    read: async (offset: number, length: number) => {
      self.asked += length;
      return bytes.subarray(offset, offset + length);
    },
  };
  return self;
}

async function problemOf(bytes: Buffer): Promise<string> {
  const error = await checkGgufBounds(source(bytes), "x.gguf").then(
    () => assert.fail("accepted"),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof RuntimeError, String(error));
  assert.equal(error.code, "model_missing");
  assert.equal(error.details?.reason, "invalid_gguf");
  assert.match(error.message, /^x\.gguf is not a valid GGUF: /);
  return String(error.details?.problem);
}

describe("checkGgufBounds", () => {
  it("refuses a string array of 2^62 elements (the sparse bomb) after reading its head only", async () => {
    const bytes = Buffer.concat([head(0n, 1n), str("a"), u32(9), u32(8), u64(1n << 62n)]);
    const src = source(bytes);
    await assert.rejects(checkGgufBounds(src, "bomb.gguf"), (error: RuntimeError) => /a declares 4611686018427387904 array elements/.test(error.message));
    assert.ok(src.asked <= 1024 * 1024, `read ${src.asked} bytes`);
  });

  it("refuses each count and length past the bound", async () => {
    assert.match(await problemOf(head(0n, BigInt(GGUF_BOUNDS.metadataKeys) + 1n)), /metadata keys/);
    assert.match(await problemOf(head(BigInt(GGUF_BOUNDS.tensors) + 1n, 0n)), /tensors/);
    assert.match(await problemOf(Buffer.concat([head(0n, 1n), u64(1n << 40n)])), /a metadata key declares 1099511627776 bytes/);
    assert.match(await problemOf(Buffer.concat([head(0n, 1n), str("k"), u32(8), u64(65n * 1024n * 1024n)])), /the value of k declares/);
    assert.match(await problemOf(Buffer.concat([head(0n, 1n), str("k"), u32(9), u32(0), u64(65n * 1024n * 1024n)])), /k declares 68157440 array elements/);
    assert.match(await problemOf(Buffer.concat([head(0n, 1n), str("k"), u32(9), u32(8), u64(2n), str("ok"), u64(1n << 40n)])), /an element of k declares 1099511627776 bytes/);
    assert.match(await problemOf(Buffer.concat([head(0n, 1n), str("k"), u32(9), u32(8), u64(1n), u64(65n * 1024n * 1024n)])), /an element of k declares 68157440 bytes/);
    assert.match(await problemOf(Buffer.concat([head(0n, 1n), str("k"), u32(9), u32(9), u64(1n), u32(9), u64(1n), u32(9), u64(1n)])), /nests arrays deeper/);
    assert.match(await problemOf(Buffer.concat([head(0n, 1n), str("k"), u32(13)])), /value type 13/);
    assert.match(await problemOf(Buffer.concat([head(1n, 0n), str("t"), u32(5)])), /tensor t has 5 dimensions/);
    assert.match(await problemOf(Buffer.concat([head(1n, 0n), str("t"), u32(2), u64(1n << 40n), u64(1n << 40n), u32(0), u64(0n)])), /tensor t declares/);
    assert.match(await problemOf(Buffer.concat([head(0n, 1n), str("general.alignment"), u32(4), u32(48)])), /general\.alignment is 48/);
    assert.match(await problemOf(Buffer.concat([Buffer.from("GGUF"), u32(7)])), /version 7/);
  });

  it("refuses a header whose total passes 64 MiB though each part is within it", async () => {
    // Two byte arrays of 40 MiB each: each fits the bound alone, not both.
    const big = (key: string): Buffer => Buffer.concat([str(key), u32(9), u32(0), u64(40n * 1024n * 1024n)]);
    const first = big("a");
    const bytes = Buffer.concat([head(0n, 2n), first, Buffer.alloc(40 * 1024 * 1024), big("b")]);
    assert.match(await problemOf(bytes), /b declares 41943040 array elements/);
  });

  it("a header that ends early is GgufHeaderEnded (the caller's to report)", async () => {
    await assert.rejects(checkGgufBounds(source(Buffer.concat([head(0n, 2n), str("a"), u32(4)])), "short.gguf"), GgufHeaderEnded);
  });

  it("passes a real model with the layout its tensors describe", async () => {
    const file = await ensureFixture("tiny");
    const [layout] = await checkGgufFile(file);
    assert.ok(layout !== undefined);
    assert.equal(layout.version, 3);
    assert.ok(layout.tensorCount > 0);
    assert.equal(layout.dataOffset % layout.alignment, 0);
    const size = (await stat(file)).size;
    assert.ok(layout.describedBytes !== undefined && layout.describedBytes <= size && size - layout.describedBytes < layout.alignment, `${layout.describedBytes} vs ${size}`);
  });
});
