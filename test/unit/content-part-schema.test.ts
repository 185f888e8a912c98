import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lastUserInput, parseChatRequest } from "../../src/http/openai/request-schema.js";
import { chatParams } from "../../src/protocol/methods/params-schemas.js";
import { isHistoryEntry } from "../../src/store/record-schemas.js";

/**
 * One content part definition (src/shared/content-part-schema.ts) behind three edges: the stdio
 * `chat` input, the HTTP request's user message, the history records on disk. Each accepts
 * exactly what its own schema accepted before they were merged (the table is that behaviour).
 */
const stdio = (part: unknown): boolean => chatParams.safeParse({ input: [part] }).success;
const http = (part: unknown): boolean => {
  try {
    parseChatRequest({ messages: [{ role: "user", content: [part] }] });
    return true;
  } catch {
    return false;
  }
};
const disk = (part: unknown): boolean => isHistoryEntry({ trace_id: "t", agent: "a", at: "2026-01-01T00:00:00Z", messages: [{ role: "user", content: [part] }] });

const CASES: Array<{ part: unknown; stdio: boolean; http: boolean; disk: boolean }> = [
  { part: { type: "text", text: "a" }, stdio: true, http: true, disk: true },
  { part: { type: "text", text: "" }, stdio: true, http: true, disk: true },
  { part: { type: "text", text: "a", cache_control: { type: "ephemeral" } }, stdio: true, http: true, disk: true },
  { part: { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, stdio: true, http: true, disk: true },
  { part: { type: "image_url", image_url: { url: "https://x/y.png", detail: "high" } }, stdio: true, http: true, disk: true },
  // OpenAI refuses an image without a URL, and so does the HTTP API; stdio and disk never checked it.
  { part: { type: "image_url", image_url: { url: "" } }, stdio: true, http: false, disk: true },
  { part: { type: "image_url", image_url: {} }, stdio: false, http: false, disk: false },
  { part: { type: "image_url", image_url: "https://x/y.png" }, stdio: false, http: false, disk: false },
  { part: { type: "text" }, stdio: false, http: false, disk: false },
  { part: { type: "text", text: 5 }, stdio: false, http: false, disk: false },
  { part: { type: "video", url: "x" }, stdio: false, http: false, disk: false },
  { part: { text: "a" }, stdio: false, http: false, disk: false },
  { part: "a", stdio: false, http: false, disk: false },
  { part: null, stdio: false, http: false, disk: false },
];

describe("content parts: one schema, each edge's inputs as before", () => {
  for (const [index, { part, ...expected }] of CASES.entries()) {
    it(`case ${index}: ${JSON.stringify(part)}`, () => {
      assert.deepEqual({ stdio: stdio(part), http: http(part), disk: disk(part) }, expected);
    });
  }

  it("what a turn receives is exactly a ContentPart (unknown keys dropped)", () => {
    const parts = [
      { type: "text", text: "a", cache_control: { type: "ephemeral" } },
      { type: "image_url", image_url: { url: "https://x/y.png", detail: "high" } },
    ];
    const expected = [
      { type: "text", text: "a" },
      { type: "image_url", image_url: { url: "https://x/y.png" } },
    ];
    const parsed = chatParams.safeParse({ input: parts });
    assert.ok(parsed.success);
    assert.deepEqual(parsed.data.input, expected);
    assert.deepEqual(lastUserInput(parseChatRequest({ messages: [{ role: "user", content: parts }] })), expected);
  });
});
