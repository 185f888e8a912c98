// Model names clients insist on (Codex: gpt-5-codex, Claude Code: claude-opus-...), mapped to
// agents by http.model_aliases, through the built CLI with the official openai client.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";

let server: HttpServer;
let tinyAnswer: string;

before(async () => {
  const [demo, tiny] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
  server = await startHttpServer(configYaml({
    llama: { models: { demo: localModel(demo), tiny: localModel(tiny) } },
    agents: { assistant: { model: "demo", temperature: 0 }, coder: { model: "tiny", temperature: 0, max_tokens: 8 } },
    http: { model_aliases: { "claude-*": "assistant", "gpt-5*": "coder", "gpt-5-mini": "assistant" } },
  }));
  tinyAnswer = await answerOf("coder");
});

after(async () => {
  await server?.stop();
});

const client = (): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0 });

async function answerOf(model: string): Promise<string> {
  const completion = await client().chat.completions.create({ model, messages: [{ role: "user", content: "Hello" }] });
  assert.equal(completion.model, model, "the asked-for name is echoed");
  return completion.choices[0]?.message.content ?? "";
}

describe("http.model_aliases (serve-http, official openai client, embedded engine)", () => {
  it("a glob maps gpt-5-codex to the coder agent; an exact alias beats the glob", async () => {
    assert.notEqual(tinyAnswer, DEMO_SENTENCE, "the two agents answer differently");
    assert.equal(await answerOf("gpt-5-codex"), tinyAnswer);
    assert.equal(await answerOf("claude-opus-4-1"), DEMO_SENTENCE);
    assert.equal(await answerOf("gpt-5-mini"), DEMO_SENTENCE);
    const stream = await client().chat.completions.create({ model: "gpt-5-codex", messages: [{ role: "user", content: "Hello" }], stream: true });
    let text = "";
    for await (const chunk of stream) {
      assert.equal(chunk.model, "gpt-5-codex");
      text += chunk.choices[0]?.delta.content ?? "";
    }
    assert.equal(text, tinyAnswer);
  });

  it("an unknown model is a 404 naming it and listing what exists", async () => {
    await assert.rejects(client().chat.completions.create({ model: "llama-9", messages: [{ role: "user", content: "Hello" }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.equal(error.code, "model_not_found");
      assert.equal(error.param, "model");
      assert.match(error.message, /The model "llama-9" does not exist\. Available: assistant, coder, gpt-5-mini; and any name matching claude-\*, gpt-5\*/);
      return true;
    });
  });

  it("/v1/models lists the agents and the exact alias (no globs); /v1/models/{id} answers an alias", async () => {
    const models = await client().models.list();
    assert.deepEqual(models.data.map((model) => model.id), ["assistant", "coder", "gpt-5-mini"]);
    const mini = models.data.find((model) => model.id === "gpt-5-mini") as unknown as { engine: string; context_length: number };
    assert.equal(mini.engine, "embedded");
    assert.equal((await client().models.retrieve("gpt-5-codex")).id, "gpt-5-codex");
    await assert.rejects(client().models.retrieve("llama-9"), (error: unknown) => error instanceof OpenAI.NotFoundError);
  });
});
