import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { LineSplitter, readLines, type LineItem } from "../../src/shared/line-splitter.js";

function split(chunks: Array<string | Buffer>, max = 64): LineItem[] {
  const splitter = new LineSplitter(max);
  const items: LineItem[] = [];
  for (const chunk of chunks) items.push(...splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
  items.push(...splitter.end());
  return items;
}

describe("LineSplitter", () => {
  it("splits on LF, tolerates CRLF and skips blank lines", () => {
    assert.deepEqual(split(['{"a":1}\r\n\n  \r\n{"b":2}\n']), [
      { kind: "line", text: '{"a":1}' },
      { kind: "line", text: '{"b":2}' },
    ]);
  });

  it("joins a line split across chunks, including inside a multi-byte character", () => {
    const bytes = Buffer.from('{"t":"héllo→"}\n');
    const cut = bytes.indexOf(0xa9); // the middle of é
    assert.deepEqual(split([bytes.subarray(0, cut), bytes.subarray(cut)]), [{ kind: "line", text: '{"t":"héllo→"}' }]);
  });

  it("emits the last line at EOF without a trailing newline", () => {
    assert.deepEqual(split(["one\ntwo"]), [
      { kind: "line", text: "one" },
      { kind: "line", text: "two" },
    ]);
  });

  it("discards an over-long line, reports its size, and goes on with the next line", () => {
    const long = "x".repeat(100);
    assert.deepEqual(split([`${long.slice(0, 40)}`, `${long.slice(40)}\nok\n`], 64), [
      { kind: "overflow", bytes: 100 },
      { kind: "line", text: "ok" },
    ]);
  });

  it("accepts a line of exactly the limit, also with CRLF", () => {
    const exact = "y".repeat(64);
    assert.deepEqual(split([`${exact}\r\n${exact}\n`], 64), [
      { kind: "line", text: exact },
      { kind: "line", text: exact },
    ]);
    assert.deepEqual(split([`${exact}z\n`], 64), [{ kind: "overflow", bytes: 65 }]);
  });

  it("never buffers more than the limit while discarding", () => {
    const splitter = new LineSplitter(1024);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 200; i++) assert.deepEqual(splitter.push(chunk), []);
    // 12.5 MiB went through; internal state holds none of it.
    const internal = splitter as unknown as { parts: Buffer[]; size: number };
    assert.equal(internal.parts.length, 0);
    assert.equal(internal.size, 0);
    assert.deepEqual(splitter.push(Buffer.from("\n{}\n")), [
      { kind: "overflow", bytes: 200 * 64 * 1024 },
      { kind: "line", text: "{}" },
    ]);
  });
});

describe("readLines", () => {
  it("reads lines from a stream until EOF", async () => {
    const input = new PassThrough();
    input.end('{"id":1}\n{"id":2}');
    const items: LineItem[] = [];
    for await (const item of readLines(input, 1024)) items.push(item);
    assert.deepEqual(items, [
      { kind: "line", text: '{"id":1}' },
      { kind: "line", text: '{"id":2}' },
    ]);
  });
});
