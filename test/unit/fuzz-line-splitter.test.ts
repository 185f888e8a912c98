import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import fc from "fast-check";
import { LineSplitter, readLines, type LineItem } from "../../src/shared/line-splitter.js";
import { fuzzParams } from "../helpers/fuzz-runs.js";

/**
 * The reference: split the whole input on LF at once. A segment is everything between two LFs;
 * one trailing CR is not content; a segment over the cap is an overflow carrying its raw byte
 * count (CR included, LF not); a blank or whitespace-only segment is skipped; the tail after the
 * last LF counts when it is not empty.
 */
function reference(input: Buffer, max: number): LineItem[] {
  const items: LineItem[] = [];
  const segments: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < input.length; i++) {
    if (input[i] === 0x0a) {
      segments.push(input.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < input.length) segments.push(input.subarray(start));
  for (const raw of segments) {
    const content = raw.length > 0 && raw[raw.length - 1] === 0x0d ? raw.subarray(0, raw.length - 1) : raw;
    if (content.length > max) {
      items.push({ kind: "overflow", bytes: raw.length });
      continue;
    }
    const text = content.toString("utf8");
    if (text.trim() !== "") items.push({ kind: "line", text });
  }
  return items;
}

function splitChunked(input: Buffer, cuts: number[], max: number): LineItem[] {
  const splitter = new LineSplitter(max);
  const items: LineItem[] = [];
  const points = [...new Set(cuts.map((cut) => cut % (input.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const point of [...points, input.length]) {
    // Pooled buffers: hand over a copy and then scribble over it, as a stream may reuse its chunk.
    const chunk = Buffer.from(input.subarray(from, point));
    items.push(...splitter.push(chunk));
    chunk.fill(0x41);
    from = point;
  }
  items.push(...splitter.end());
  return items;
}

// Bytes biased towards what matters: LF, CR, spaces, multi-byte UTF-8 pieces, and anything at all.
const interestingByte = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(0x0a, 0x0d, 0x20, 0x09) },
  { weight: 6, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) },
  { weight: 2, arbitrary: fc.constantFrom(0xc3, 0xa9, 0xe2, 0x86, 0x92, 0xf0, 0x9f, 0x98, 0x80) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }) },
);
const bytes = fc.array(interestingByte, { maxLength: 400 }).map((list) => Buffer.from(list));
// Whole UTF-8 text with line breaks, so valid characters get cut across chunks.
const text = fc
  .array(fc.oneof(fc.string({ unit: "grapheme", maxLength: 20 }), fc.constantFrom("\n", "\r\n", "\n\n", "  \n", "\r")), { maxLength: 30 })
  .map((parts) => Buffer.from(parts.join("")));
const cuts = fc.array(fc.nat({ max: 1000 }), { maxLength: 40 });
const cap = fc.integer({ min: 1, max: 80 });

describe("LineSplitter (fuzzed)", () => {
  it("any chunking of any bytes gives the lines of splitting the whole input at once", () => {
    fc.assert(
      fc.property(fc.oneof(bytes, text), cuts, cap, (input, cutList, max) => {
        assert.deepEqual(splitChunked(input, cutList, max), reference(input, max));
      }),
      fuzzParams(400),
    );
  });

  it("byte by byte is the same as all at once", () => {
    fc.assert(
      fc.property(fc.oneof(bytes, text), cap, (input, max) => {
        const everyByte = Array.from({ length: input.length }, (_, i) => i);
        assert.deepEqual(splitChunked(input, everyByte, max), splitChunked(input, [], max));
      }),
      fuzzParams(150),
    );
  });

  it("every item respects the cap: lines hold no LF and are not blank, overflows are over the cap", () => {
    fc.assert(
      fc.property(bytes, cuts, cap, (input, cutList, max) => {
        const items = splitChunked(input, cutList, max);
        for (const item of items) {
          if (item.kind === "line") {
            assert.ok(Buffer.byteLength(item.text) <= max * 3, "a line decodes to at most 3 bytes per input byte (U+FFFD)");
            assert.ok(!item.text.includes("\n"));
            assert.notEqual(item.text.trim(), "");
          } else {
            assert.ok(item.bytes > max, `an overflow of ${item.bytes} bytes with a cap of ${max}`);
          }
        }
        const overflowBytes = items.reduce((sum, item) => sum + (item.kind === "overflow" ? item.bytes : 0), 0);
        assert.ok(overflowBytes <= input.length);
      }),
      fuzzParams(300),
    );
  });

  it("an over-long line of known size reports exactly its size, CRLF or not, wherever the chunks fall", () => {
    fc.assert(
      fc.property(cap, fc.integer({ min: 1, max: 200 }), fc.boolean(), cuts, (max, extra, crlf, cutList) => {
        const long = Buffer.alloc(max + extra, 0x78);
        const input = Buffer.concat([Buffer.from("a\n"), long, Buffer.from(crlf ? "\r\n" : "\n"), Buffer.from("b\n")]);
        const items = splitChunked(input, cutList, max);
        assert.deepEqual(items, [
          { kind: "line", text: "a" },
          { kind: "overflow", bytes: max + extra + (crlf ? 1 : 0) },
          { kind: "line", text: "b" },
        ]);
      }),
      fuzzParams(300),
    );
  });

  it("a line of exactly the cap is a line, with or without CR", () => {
    fc.assert(
      fc.property(cap, fc.boolean(), cuts, (max, crlf, cutList) => {
        const line = "y".repeat(max);
        assert.deepEqual(splitChunked(Buffer.from(`${line}${crlf ? "\r\n" : "\n"}`), cutList, max), [{ kind: "line", text: line }]);
      }),
      fuzzParams(200),
    );
  });

  it("readLines over a stream gives the same items as the splitter", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(bytes, text), cuts, cap, async (input, cutList, max) => {
        const stream = new PassThrough();
        const collected = (async () => {
          const items: LineItem[] = [];
          for await (const item of readLines(stream, max)) items.push(item);
          return items;
        })();
        const points = [...new Set(cutList.map((cut) => cut % (input.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const point of [...points, input.length]) {
          if (point > from) stream.write(input.subarray(from, point));
          from = point;
        }
        stream.end();
        assert.deepEqual(await collected, reference(input, max));
      }),
      fuzzParams(100),
    );
  });
});
