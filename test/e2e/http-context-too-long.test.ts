// The stream-start rule, the same in the three turn dialects (docs/http-api.md "When a stream
// starts"): a conversation too long for the context is refused before any byte of the answer, as
// an HTTP 400 in the dialect's own error shape, whether the client asked for a stream or not.
// Through the built CLI on the embedded engine (demo model).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";

let server: HttpServer;

before(async () => {
  const demo = await ensureFixture("demo");
  server = await startHttpServer(configYaml({ llama: { models: { default: localModel(demo) } }, agents: { assistant: { temperature: 0, max_tokens: 32 } } }));
});

after(async () => {
  await server?.stop();
});

/** More tokens than the demo model's context holds. */
const LONG = "word ".repeat(3000);

/** Each dialect's request for `text` as its one user message. */
/** Each dialect's request for `text` as its one user message, and the last frame of its stream. */
const DIALECTS: Array<{ name: string; path: string; body: (text: string, stream: boolean) => Record<string, unknown>; end: RegExp }> = [
  { name: "chat completions", path: "/v1/chat/completions", body: (text, stream) => ({ model: "assistant", stream, messages: [{ role: "user", content: text }] }), end: /data: \[DONE\]\n\n$/ },
  { name: "responses", path: "/v1/responses", body: (text, stream) => ({ model: "assistant", stream, store: false, input: text }), end: /event: response\.completed\n[^\n]*\n\n$/ },
  { name: "messages", path: "/v1/messages", body: (text, stream) => ({ model: "assistant", stream, max_tokens: 32, messages: [{ role: "user", content: text }] }), end: /event: message_stop\n[^\n]*\n\n$/ },
];

const post = (path: string, body: unknown): Promise<Response> =>
  fetch(`${server.base}${path}`, { method: "POST", headers: { "Content-Type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });

/** The refusal as each dialect's clients parse it: OpenAI's `error.code`/`param`, Anthropic's `type: "error"`. */
const EXPECTED: Record<string, (body: Record<string, unknown>) => void> = {
  "chat completions": (body) => assert.deepEqual(pick(body.error, ["type", "code", "param"]), { type: "invalid_request_error", code: "context_length_exceeded", param: "messages" }),
  responses: (body) => assert.deepEqual(pick(body.error, ["type", "code", "param"]), { type: "invalid_request_error", code: "context_length_exceeded", param: "input" }),
  messages: (body) => {
    assert.equal(body.type, "error");
    assert.equal((body.error as { type: string }).type, "invalid_request_error");
    assert.match((body.error as { message: string }).message, /^messages: The input does not fit the context window/);
  },
};

function pick(value: unknown, keys: string[]): Record<string, unknown> {
  const record = value as Record<string, unknown>;
  return Object.fromEntries(keys.map((key) => [key, record[key]]));
}

describe("a conversation too long for the context: the same answer in every dialect", () => {
  for (const dialect of DIALECTS) {
    it(`${dialect.name}: a 400 before any byte of the answer, streamed or not`, async () => {
      for (const stream of [false, true]) {
        const reply = await post(dialect.path, dialect.body(LONG, stream));
        assert.equal(reply.status, 400, `stream ${stream}`);
        assert.match(reply.headers.get("content-type") ?? "", /^application\/json/, `stream ${stream}: no event stream was started`);
        const body = (await reply.json()) as Record<string, unknown>;
        EXPECTED[dialect.name]!(body);
        assert.equal((body.error as { request_id: string }).request_id, reply.headers.get("x-request-id"));
      }
    });
  }

  it("a turn that fits still streams in every dialect, to its own last frame", async () => {
    for (const dialect of DIALECTS) {
      const reply = await post(dialect.path, dialect.body("Hello!", true));
      assert.equal(reply.status, 200, dialect.name);
      assert.match(reply.headers.get("content-type") ?? "", /^text\/event-stream/, dialect.name);
      const text = await reply.text();
      assert.match(text, dialect.end, `${dialect.name}: ${text.slice(-300)}`);
    }
  });
});
