// `local_ai.timings` on every HTTP dialect's answer (built CLI, serve-http, embedded engine, the
// demo model): what reading the prompt cost (tokens read, cached, ms, tokens/s), adding up with
// the dialect's own usage; the same conversation's next request reads only what is new. And the
// stdio `usage` event's `prompt_ms`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CliProcess } from "../helpers/cli-process.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { tempConfig } from "../helpers/temp-config.js";

interface Timings {
  prompt_n: number;
  cache_n: number;
  prompt_ms: number;
  prompt_per_second: number | null;
}

let server: HttpServer;
let demo = "";

before(async () => {
  demo = await ensureFixture("demo");
  server = await startHttpServer(configYaml({ llama: { models: { default: localModel(demo) } }, agents: { assistant: { temperature: 0 } } }));
});

after(async () => {
  await server?.stop();
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const reply = await fetch(`${server.base}${path}`, { method: "POST", headers: { "Content-Type": "application/json", "anthropic-version": "2023-06-01", ...headers }, body: JSON.stringify(body) });
  const json = (await reply.json()) as Record<string, unknown>;
  assert.equal(reply.status, 200, JSON.stringify(json));
  return json;
}

/** The timings are well-formed and add up to the dialect's prompt and cached counts. */
function checkTimings(local: unknown, promptTokens: number, cachedTokens: number): Timings {
  const timings = (local as { timings?: Timings }).timings;
  assert.ok(timings, `no local_ai.timings in ${JSON.stringify(local)}`);
  assert.deepEqual(Object.keys(timings), ["prompt_n", "cache_n", "prompt_ms", "prompt_per_second"]);
  assert.equal(timings.prompt_n + timings.cache_n, promptTokens, "tokens read + cached = the prompt");
  assert.equal(timings.cache_n, cachedTokens, "cache_n is the dialect's cached count");
  assert.ok(Number.isInteger(timings.prompt_ms) && timings.prompt_ms >= 0);
  if (timings.prompt_n > 0 && timings.prompt_ms > 0) assert.ok(timings.prompt_per_second !== null && Math.abs(timings.prompt_per_second - (timings.prompt_n * 1000) / timings.prompt_ms) <= 0.1);
  return timings;
}

describe("local_ai.timings (built CLI, embedded engine)", () => {
  it("chat completions: timings add up with usage; the conversation's next turn reads only what is new", async () => {
    const messages = [{ role: "user", content: "Tell me about apples" }];
    const first = await post("/v1/chat/completions", { model: "assistant", messages, user: "timings-a" });
    const usage = first.usage as { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
    const a = checkTimings(first.local_ai, usage.prompt_tokens, usage.prompt_tokens_details?.cached_tokens ?? 0);
    assert.ok(a.prompt_n > 0);
    const answer = (first.choices as Array<{ message: { content: string } }>)[0]?.message.content ?? "";
    const second = await post("/v1/chat/completions", { model: "assistant", messages: [...messages, { role: "assistant", content: answer }, { role: "user", content: "And pears?" }], user: "timings-a" });
    const usage2 = second.usage as { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
    const b = checkTimings(second.local_ai, usage2.prompt_tokens, usage2.prompt_tokens_details?.cached_tokens ?? 0);
    assert.ok(b.cache_n > 0, "the first turn's prompt is reused");
    assert.ok(b.prompt_n < usage2.prompt_tokens);
  });

  it("Responses and Messages: the same figures in their local_ai", async () => {
    const response = await post("/v1/responses", { model: "assistant", input: "Tell me about boats", store: false });
    const ru = response.usage as { input_tokens: number; input_tokens_details: { cached_tokens: number } };
    checkTimings(response.local_ai, ru.input_tokens, ru.input_tokens_details.cached_tokens);
    const message = await post("/v1/messages", { model: "assistant", max_tokens: 64, messages: [{ role: "user", content: "Tell me about trains" }] });
    const mu = message.usage as { input_tokens: number; cache_read_input_tokens: number | null };
    // Anthropic's input_tokens excludes the tokens read from the cache.
    checkTimings(message.local_ai, mu.input_tokens + (mu.cache_read_input_tokens ?? 0), mu.cache_read_input_tokens ?? 0);
  });

  it("stdio: the usage event carries prompt_ms", async () => {
    const { dir, configPath } = await tempConfig(configYaml({ llama: { models: { default: localModel(demo) } }, agents: { assistant: { temperature: 0 } } }));
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const reply = await proc.request({ id: "c1", method: "chat", params: { session_id: "t1", input: "Hello!" } }, 60_000);
    assert.equal(reply.type, "result", JSON.stringify(reply));
    const usage = proc.messages.find((m) => m.id === "c1" && m.event === "usage");
    assert.ok(usage && Number.isInteger(usage.prompt_ms) && Number(usage.prompt_ms) >= 0, JSON.stringify(usage));
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
  });
});
