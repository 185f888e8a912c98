import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { base64Bytes, toToolCallResult } from "../../src/tools/mcp/call-result.js";
import { mcpServerEnv } from "../../src/tools/mcp/server-env.js";
import { StderrTail } from "../../src/tools/mcp/stderr-lines.js";
import { capOutput, DEFAULT_MAX_OUTPUT_BYTES } from "../../src/tools/output-cap.js";
import { captureLogger } from "../helpers/capture-logger.js";

describe("capOutput", () => {
  it("leaves text within the cap alone", () => {
    assert.equal(capOutput("hello", 5), "hello");
    assert.equal(DEFAULT_MAX_OUTPUT_BYTES, 16 * 1024);
  });

  it("truncates with a marker saying how many bytes were dropped", () => {
    assert.equal(capOutput("a".repeat(100), 10), `${"a".repeat(10)}…[truncated 90 bytes]`);
  });

  it("never cuts inside a UTF-8 character", () => {
    // "a" is 1 byte, "é" 2: a cap of 4 would split the second "é", so it stops after 3 bytes.
    const out = capOutput("aéé", 4);
    assert.equal(out, "aé…[truncated 2 bytes]");
    const emoji = capOutput("😀😀", 5);
    assert.equal(emoji, "😀…[truncated 4 bytes]");
  });
});

describe("toToolCallResult", () => {
  it("joins text blocks with newlines", () => {
    const result = toToolCallResult({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }, 1000);
    assert.deepEqual(result, { status: "ok", content: "a\nb", retryable: false });
  });

  it("names binary content in the text, passes images on, and gives embedded text under its URI", () => {
    const data = Buffer.alloc(1234).toString("base64");
    const result = toToolCallResult(
      {
        content: [
          { type: "image", mimeType: "image/png", data },
          { type: "audio", mimeType: "audio/wav", data: Buffer.alloc(10).toString("base64") },
          { type: "resource_link", uri: "file:///x.txt", name: "x" },
          { type: "resource", resource: { uri: "file:///y.txt", text: "inline text" } },
          { type: "resource", resource: { uri: "file:///z.bin", mimeType: "application/octet-stream", blob: Buffer.alloc(7).toString("base64") } },
        ],
      },
      1000,
    );
    assert.equal(
      result.content,
      "[image: image/png, 1234 bytes]\n[audio: audio/wav, 10 bytes]\n[resource link: file:///x.txt]\n[resource: file:///y.txt]\ninline text\n[resource: file:///z.bin, application/octet-stream, 7 bytes]",
    );
    assert.deepEqual(result.images, [{ mimeType: "image/png", data }]);
  });

  it("gives structuredContent as JSON when there is no content", () => {
    assert.equal(toToolCallResult({ content: [], structuredContent: { answer: 42 } }, 1000).content, '{"answer":42}');
    assert.equal(toToolCallResult({ toolResult: { legacy: true } }, 1000).content, '{"legacy":true}');
  });

  it("adds structuredContent as JSON when no block is text, never when one is", () => {
    const data = Buffer.alloc(3).toString("base64");
    assert.equal(toToolCallResult({ content: [{ type: "image", mimeType: "image/gif", data }], structuredContent: { n: 1 } }, 1000).content, '[image: image/gif, 3 bytes]\n{"n":1}');
    assert.deepEqual(toToolCallResult({ content: [{ type: "text", text: "one" }], structuredContent: { n: 1 } }, 1000), { status: "ok", content: "one", retryable: false });
  });

  it("maps isError to status error, not retryable, with its text", () => {
    assert.deepEqual(toToolCallResult({ content: [{ type: "text", text: "denied" }], isError: true }, 1000), {
      status: "error",
      content: "denied",
      retryable: false,
    });
    assert.match(toToolCallResult({ content: [], isError: true }, 1000).content, /without a message/);
  });

  it("caps the output", () => {
    const result = toToolCallResult({ content: [{ type: "text", text: "x".repeat(50) }] }, 20);
    assert.equal(result.content, `${"x".repeat(20)}…[truncated 30 bytes]`);
  });
});

describe("base64Bytes", () => {
  it("computes the decoded size", () => {
    for (const size of [0, 1, 2, 3, 4, 100, 4033]) assert.equal(base64Bytes(Buffer.alloc(size).toString("base64")), size);
  });
});

describe("mcpServerEnv", () => {
  it("passes an allow-list of our environment plus the server's env", () => {
    const env = mcpServerEnv(
      { PATH: "/bin", HOME: "/home/u", LC_ALL: "C", OPENAI_API_KEY: "secret", LOCAL_AI_TOKEN: "t", UNSET: undefined },
      { API_KEY: "for-the-server", PATH: "/custom" },
    );
    assert.deepEqual(env, { PATH: "/custom", HOME: "/home/u", LC_ALL: "C", API_KEY: "for-the-server" });
  });
});

describe("StderrTail", () => {
  it("logs each line at debug and keeps the last ten", async () => {
    const { logger, records } = captureLogger("debug");
    const stream = new PassThrough();
    const tail = new StderrTail(stream, logger);
    stream.write("line 1\nline");
    stream.write(" 2\r\n\n");
    for (let i = 3; i <= 12; i++) stream.write(`line ${i}\n`);
    stream.end("partial");
    await new Promise((resolve) => setImmediate(resolve));
    const lines = records().map((r) => r.msg);
    assert.deepEqual(lines.slice(0, 2), ["line 1", "line 2"]);
    assert.equal(lines.at(-1), "partial");
    assert.ok(records().every((r) => r.level === 20 && r.stream === "stderr"));
    assert.equal(tail.tail().split("\n").length, 10);
    assert.ok(tail.tail().endsWith("line 12\npartial"));
  });
});
