import assert from "node:assert/strict";
import { test } from "node:test";
import { errorExcerpt } from "../../src/engine/llama-server/error-excerpt.js";
import { LogTail } from "../../src/shared/process/log-tail.js";
import { OutputLineSplitter as LineSplitter } from "../../src/shared/process/output-lines.js";

test("LineSplitter joins lines across chunks, including a UTF-8 character split in two", () => {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line));
  const bytes = Buffer.from("load ✓ done\r\nsecond\nthird", "utf8");
  const cut = bytes.indexOf(0x9c); // inside the 3-byte check mark
  splitter.push(bytes.subarray(0, cut));
  splitter.push(bytes.subarray(cut));
  assert.deepEqual(lines, ["load ✓ done", "second"]);
  splitter.end();
  assert.deepEqual(lines, ["load ✓ done", "second", "third"]);
});

test("LineSplitter bounds an endless line instead of buffering it", () => {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), 10);
  for (let i = 0; i < 1000; i++) splitter.push("x".repeat(100));
  splitter.push("\nok\n");
  assert.deepEqual(lines, ["xxxxxxxxxx [truncated]", "ok"]);
});

test("LogTail keeps the last lines only; errorExcerpt prefers error lines", () => {
  const tail = new LogTail(3);
  for (const line of ["a", "b", "0.01 E failed to load model", "c", "d"]) tail.push(line);
  assert.deepEqual(tail.lines(), ["0.01 E failed to load model", "c", "d"]);
  assert.deepEqual(tail.lines(2), ["c", "d"]);
  assert.deepEqual(errorExcerpt(tail.lines()), ["0.01 E failed to load model"]);
  assert.deepEqual(errorExcerpt(["x", "y", "z"], 2), ["y", "z"]);
});
