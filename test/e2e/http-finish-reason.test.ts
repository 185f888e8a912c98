// The finish reason of a turn cut by max_tokens, in both HTTP modes, non-stream and stream,
// through the built CLI on the embedded engine (the session mode said "stop" before the turn
// outcome carried it).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";

let server: HttpServer;

before(async () => {
  const demo = await ensureFixture("demo");
  server = await startHttpServer(configYaml({ llama: { models: { default: localModel(demo) } }, agents: { assistant: { temperature: 0 } } }));
});

after(async () => {
  await server?.stop();
});

const messages = [{ role: "user" as const, content: "Hello" }];
type SessionBody = OpenAI.ChatCompletionCreateParamsNonStreaming & { session_id?: string };

async function streamed(client: OpenAI, body: Record<string, unknown>): Promise<{ text: string; finish: string | null | undefined; completionTokens: number | undefined }> {
  const stream = await client.chat.completions.create({ model: "assistant", messages, max_tokens: 3, stream: true, stream_options: { include_usage: true }, ...body } as OpenAI.ChatCompletionCreateParamsStreaming);
  let text = "";
  let finish: string | null | undefined;
  let completionTokens: number | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? "";
    finish ??= chunk.choices[0]?.finish_reason;
    if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
  }
  return { text, finish, completionTokens };
}

describe("max_tokens cuts the answer: finish_reason length (serve-http, embedded engine)", () => {
  it("session mode, non-stream and stream", async () => {
    const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0 });
    const cut = await client.chat.completions.create({ model: "assistant", messages, max_tokens: 3, session_id: "len1" } as SessionBody);
    assert.equal((cut as unknown as { local_ai: { session_id: string } }).local_ai.session_id, "len1");
    assert.equal(cut.choices[0]?.finish_reason, "length");
    assert.equal(cut.usage?.completion_tokens, 3);
    const text = cut.choices[0]?.message.content ?? "";
    assert.ok(text !== DEMO_SENTENCE && DEMO_SENTENCE.startsWith(text), text);
    const stream = await streamed(client, { session_id: "len2" });
    assert.equal(stream.finish, "length");
    assert.equal(stream.completionTokens, 3);
    assert.equal(stream.text, text);
    // A whole answer still says stop.
    const whole = await client.chat.completions.create({ model: "assistant", messages, session_id: "len3" } as SessionBody);
    assert.equal(whole.choices[0]?.finish_reason, "stop");
  });

  it("session mode, events stream: the result frame says length too", async () => {
    const res = await fetch(`${server.base}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Local-AI-Events": "1" },
      body: JSON.stringify({ model: "assistant", messages, max_tokens: 3, stream: true, session_id: "len4" }),
    });
    const frames = (await res.text()).split("\n\n").filter((frame) => frame.startsWith("event: result\n"));
    assert.equal(frames.length, 1);
    const result = JSON.parse(frames[0]?.split("\ndata: ")[1] ?? "") as { finish_reason: string; choices: Array<{ finish_reason: string }> };
    assert.equal(result.finish_reason, "length");
    assert.equal(result.choices[0]?.finish_reason, "length");
  });

  it("a conversation kept by the client, stream", async () => {
    const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0 });
    const stream = await streamed(client, {});
    assert.equal(stream.finish, "length");
    assert.equal(stream.completionTokens, 3);
  });
});
