// Non-blocking stdout on Windows (injected platform): protocol lines go through an fs stream on
// stdout's fd, which reports backpressure; POSIX and a TTY keep process.stdout.
import assert from "node:assert/strict";
import { once } from "node:events";
import { openSync, readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { WriteStream } from "node:fs";
import { test } from "node:test";
import { protocolOutput } from "../../src/shared/process/protocol-output.js";

test("win32, stdout a pipe or file: an fs stream on its fd with a bounded buffer (write() returns false when full)", async () => {
  const file = path.join(await mkdtemp(path.join(tmpdir(), "local-ai-stdout-")), "out.ndjson");
  const fd = openSync(file, "w");
  const stdout = Object.assign(new PassThrough(), { fd, isTTY: false });
  const output = protocolOutput(stdout, "win32");
  assert.ok(output instanceof WriteStream);
  assert.equal(output.writableHighWaterMark, 64 * 1024);
  assert.equal(output.write(`${"x".repeat(70 * 1024)}\n`), false, "a write past the bound asks the writer to wait");
  await once(output, "drain");
  output.write('{"id":1}\n');
  output.end();
  await once(output, "finish");
  assert.equal(readFileSync(file, "utf8"), `${"x".repeat(70 * 1024)}\n{"id":1}\n`);
});

test("POSIX, and a console on win32: process.stdout itself", () => {
  const pipe = Object.assign(new PassThrough(), { fd: 1, isTTY: false });
  assert.equal(protocolOutput(pipe, "linux"), pipe);
  assert.equal(protocolOutput(pipe, "darwin"), pipe);
  const console = Object.assign(new PassThrough(), { fd: 1, isTTY: true });
  assert.equal(protocolOutput(console, "win32"), console);
});
