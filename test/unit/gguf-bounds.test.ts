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

  it("refuses a header whose total passes the header bound though each part is within it", async () => {
    // Two strings of 14 MiB each: each fits the 24 MiB bound alone, not both.
    const big = (key: string): Buffer => Buffer.concat([str(key), u32(8), u64(14n * 1024n * 1024n)]);
    const bytes = Buffer.concat([head(0n, 2n), big("a"), Buffer.alloc(14 * 1024 * 1024), big("b")]);
    assert.match(await problemOf(bytes), /the value of b declares 14680064 bytes, past the 24 MiB header bound/);
  });

  it("refuses an array of more elements than one array may hold, and arrays past the total, before reading them (issue 33)", async () => {
    const bytes = (key: string, count: number): Buffer => Buffer.concat([str(key), u32(9), u32(0), u64(BigInt(count))]);
    // One element more than an array may hold: refused at its count (nothing of it read).
    const over = Buffer.concat([head(0n, 1n), bytes("k", GGUF_BOUNDS.arrayElements + 1)]);
    const src = source(over);
    await assert.rejects(checkGgufBounds(src, "x.gguf"), (error: RuntimeError) => error.details?.problem === `k declares ${GGUF_BOUNDS.arrayElements + 1} array elements (at most 1048576 in one array)`);
    assert.ok(src.asked <= 1024 * 1024, `read ${src.asked} bytes`);
    // The 60 MB header of one byte array of 62.9 M elements (1.2 GB in node-llama-cpp's reader before).
    assert.equal(await problemOf(Buffer.concat([head(0n, 1n), bytes("a", 62_914_560)])), "a declares 62914560 array elements (at most 1048576 in one array)");
    // Each within the per-array bound, together past the total; nested arrays count too.
    const first = Buffer.concat([bytes("a", GGUF_BOUNDS.arrayElements), Buffer.alloc(GGUF_BOUNDS.arrayElements, 1)]);
    assert.equal(await problemOf(Buffer.concat([head(0n, 2n), first, bytes("b", 600_000)])), "b declares 600000 array elements, 1648576 in all (at most 1572864 in all arrays)");
    // 1,048,576 + the outer 2 + 524,286: exactly the total; one more element is past it.
    const nested = Buffer.concat([str("n"), u32(9), u32(9), u64(2n), u32(0), u64(524_286n), Buffer.alloc(524_286, 1), u32(0), u64(1n)]);
    assert.equal(await problemOf(Buffer.concat([head(0n, 2n), first, nested])), "n declares 1 array elements, 1572865 in all (at most 1572864 in all arrays)");
  });

  it("passes arrays exactly at the bounds (a vocabulary of 262,144 strings, merges of 446,189, 1,572,864 elements in all)", async () => {
    const strings = (key: string, count: number): Buffer => {
      const one = Buffer.concat([u64(2n), Buffer.from("ab")]);
      return Buffer.concat([str(key), u32(9), u32(8), u64(BigInt(count)), Buffer.alloc(one.length * count).fill(one)]);
    };
    const numbers = (key: string, count: number): Buffer => Buffer.concat([str(key), u32(9), u32(6), u64(BigInt(count)), Buffer.alloc(4 * count)]);
    const rest = GGUF_BOUNDS.totalArrayElements - 262_144 * 3 - 446_189;
    const bytes = Buffer.concat([
      head(0n, 5n),
      strings("tokenizer.ggml.tokens", 262_144),
      numbers("tokenizer.ggml.scores", 262_144),
      numbers("tokenizer.ggml.token_type", 262_144),
      strings("tokenizer.ggml.merges", 446_189),
      numbers("other", rest),
    ]);
    const layout = await checkGgufBounds(source(bytes), "x.gguf");
    assert.equal(layout.headerBytes, bytes.length);
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
