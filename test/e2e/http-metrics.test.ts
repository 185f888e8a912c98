// serve-http's GET /metrics and request ids through the built CLI, on the openai engine against a
// scripted upstream that reports exact token counts: the counters move by exactly a chat's
// tokens, a disconnect and an error are counted, no label carries a session id or a raw path;
// X-Request-Id reaches the official openai client, the error bodies of each dialect, the
// `local_ai` extension and every log line of the request.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { chunk, listingModel, sendData, sendJson, startSse, startUpstream, type ScriptedUpstream } from "../helpers/openai-sse-upstream.js";
import { configYaml, openaiModel } from "../helpers/config-yaml.js";
import { labelValues, parsePromText, sampleValue, type PromFamily } from "../helpers/prom-text.js";

const TOKEN = "metrics-secret-1";
const PROMPT = 17;
const CACHED = 5;
const GENERATED = 2;

let upstream: ScriptedUpstream;
let server: HttpServer;

const lastUserText = (body: unknown): string => {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const last = messages.filter((message) => message.role === "user").at(-1);
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
};

before(async () => {
  upstream = await startUpstream(
    listingModel("up-model", (_req, res, body) => {
      const text = lastUserText(body);
      if (text.includes("upstream-fails")) return sendJson(res, 400, { error: { message: "scripted refusal", type: "invalid_request_error" } });
      startSse(res);
      sendData(res, chunk({ role: "assistant", content: "Hello" }));
      // A client that goes away mid-stream: the upstream keeps the stream open until cancelled.
      if (text.includes("hang")) return;
      sendData(res, chunk({ content: " there" }, "stop"));
      sendData(res, { id: "chatcmpl-test", object: "chat.completion.chunk", created: 1, model: "up-model", choices: [], usage: { prompt_tokens: PROMPT, completion_tokens: GENERATED, total_tokens: PROMPT + GENERATED, prompt_tokens_details: { cached_tokens: CACHED } } });
      sendData(res, "[DONE]");
      res.end();
    }),
  );
  const yaml = configYaml({
    http: { bearer_token: TOKEN, metrics: true },
    llama: { models: { default: openaiModel(upstream.baseUrl, "up-model") } },
    agents: { assistant: { temperature: 0 } },
  });
  server = await startHttpServer(yaml, [], { LOCAL_AI_LOG_LEVEL: "info" });
});

after(async () => {
  await server?.stop();
  await upstream?.close();
});

const auth = { Authorization: `Bearer ${TOKEN}` };

async function scrape(): Promise<Map<string, PromFamily>> {
  const response = await fetch(`${server.base}/metrics`, { headers: auth });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parsePromText(await response.text());
}

const chatLabels = { agent: "assistant", model: "default", endpoint: "/v1/chat/completions", key: "default" };

/** The JSON log lines of serve-http's stderr so far. */
const logLines = (): Array<Record<string, unknown>> =>
  server.proc.stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("GET /metrics (built CLI, openai engine on a scripted upstream)", () => {
  it("is behind the bearer token, strict exposition format, with the process defaults and every local_ai series", async () => {
    assert.equal((await fetch(`${server.base}/metrics`)).status, 401);
    const families = await scrape();
    for (const name of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds"]) assert.ok(families.has(name), `default metric ${name}`);
    const expected: Record<string, PromFamily["type"]> = {
      local_ai_requests_total: "counter",
      local_ai_requests_in_flight: "gauge",
      local_ai_queue_depth: "gauge",
      local_ai_queue_wait_seconds: "histogram",
      local_ai_time_to_first_token_seconds: "histogram",
      local_ai_request_duration_seconds: "histogram",
      local_ai_prompt_tokens_total: "counter",
      local_ai_cached_prompt_tokens_total: "counter",
      local_ai_generated_tokens_total: "counter",
      local_ai_model_load_seconds: "histogram",
      local_ai_model_memory_bytes: "gauge",
      local_ai_tool_calls_total: "counter",
      local_ai_approvals_waiting: "gauge",
      local_ai_client_disconnects_total: "counter",
    };
    for (const [name, type] of Object.entries(expected)) assert.equal(families.get(name)?.type, type, name);
    // The eager warm-up loaded the default model once, after its wait for memory.
    assert.equal(sampleValue(families, "local_ai_model_load_seconds_count", { model: "default" }), 1);
    assert.equal(sampleValue(families, "local_ai_queue_wait_seconds_count", { model: "default" }), 1);
  });

  it("a scripted chat moves the token counters by exactly its tokens; X-Request-Id reaches the openai client, local_ai and the logs", async () => {
    const before = await scrape();
    const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const { data, response, request_id: clientSees } = await client.chat.completions.create({ model: "assistant", messages: [{ role: "user", content: "Hi" }] }).withResponse();
    assert.equal(data.choices[0]?.message.content, "Hello there");
    const id = response.headers.get("x-request-id") ?? "";
    assert.match(id, /^req_[0-9a-f]{24}$/, "a generated id");
    assert.equal(clientSees, id, "the openai client reads it as the request id");
    const local = (data as unknown as { local_ai: { request_id: string; trace_id: string } }).local_ai;
    assert.equal(local.request_id, id);

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = chatLabels): number => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    assert.equal(moved("local_ai_prompt_tokens_total"), PROMPT);
    assert.equal(moved("local_ai_cached_prompt_tokens_total"), CACHED);
    assert.equal(moved("local_ai_generated_tokens_total"), GENERATED);
    assert.equal(moved("local_ai_requests_total", { ...chatLabels, status: "200" }), 1);
    assert.equal(moved("local_ai_time_to_first_token_seconds_count"), 1);
    assert.equal(moved("local_ai_request_duration_seconds_count"), 1);
    assert.equal(sampleValue(after, "local_ai_requests_in_flight", { endpoint: "/v1/chat/completions" }), 0);

    // Every line of the request carries its id: the agent's own and the one access-log line.
    const mine = logLines().filter((line) => line.request_id === id);
    const turnLine = logLines().find((line) => line.trace_id === local.trace_id && line.msg === "stateless turn finished");
    assert.equal(turnLine?.request_id, id, "the agent's log line of the turn carries the request id");
    const access = mine.filter((line) => line.msg === "request");
    assert.equal(access.length, 1, "one access-log line");
    const line = access[0] ?? {};
    assert.deepEqual(
      { method: line.method, path: line.path, status: line.status, key: line.key, agent: line.agent, model: line.model, prompt: line.prompt_tokens, cached: line.cached_tokens, generated: line.generated_tokens, level: line.level },
      { method: "POST", path: "/v1/chat/completions", status: 200, key: "default", agent: "assistant", model: "default", prompt: PROMPT, cached: CACHED, generated: GENERATED, level: 30 },
    );
    assert.ok(typeof line.ttft_ms === "number" && typeof line.duration_ms === "number" && line.ttft_ms <= line.duration_ms, JSON.stringify(line));
    assert.ok(!JSON.stringify(line).includes(TOKEN) && !JSON.stringify(line).includes("Hello there"), "no token, no body");
  });

  it("a client's own safe X-Request-Id is kept; an unsafe one is replaced", async () => {
    const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const own = await client.models.list({ headers: { "X-Request-Id": "trace:abc-1.2_Z" } }).withResponse();
    assert.equal(own.response.headers.get("x-request-id"), "trace:abc-1.2_Z");
    for (const unsafe of ["two words", "x".repeat(129), "semi;colon"]) {
      const replaced = await fetch(`${server.base}/v1/models`, { headers: { ...auth, "X-Request-Id": unsafe } });
      assert.match(replaced.headers.get("x-request-id") ?? "", /^req_[0-9a-f]{24}$/, unsafe);
    }
    // Refusals before any route (no token) carry one too.
    assert.match((await fetch(`${server.base}/v1/models`)).headers.get("x-request-id") ?? "", /^req_/);
  });

  it("errors carry error.request_id in each dialect, and are counted by status", async () => {
    const before = await scrape();
    const client = new OpenAI({ baseURL: `${server.base}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const refused = await client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "Hi" }] }).then(
      () => assert.fail("must be refused"),
      (error: unknown) => error as InstanceType<typeof OpenAI.NotFoundError>,
    );
    assert.ok(refused instanceof OpenAI.NotFoundError);
    assert.match(refused.requestID ?? "", /^req_/);
    assert.equal((refused.error as { request_id?: string }).request_id, refused.requestID);

    const responses = await fetch(`${server.base}/v1/responses`, { method: "POST", headers: { ...auth, "Content-Type": "application/json", "X-Request-Id": "resp-err-1" }, body: JSON.stringify({ model: "no-such-model", input: "Hi" }) });
    assert.equal(responses.status, 404);
    assert.equal(((await responses.json()) as { error: { request_id: string } }).error.request_id, "resp-err-1");

    const messages = await fetch(`${server.base}/v1/messages`, { method: "POST", headers: { ...auth, "Content-Type": "application/json", "anthropic-version": "2023-06-01", "X-Request-Id": "msg-err-1" }, body: JSON.stringify({ model: "no-such-model", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] }) });
    assert.equal(messages.status, 404);
    const anthropic = (await messages.json()) as { type: string; error: { type: string; request_id: string } };
    assert.deepEqual([anthropic.type, anthropic.error.type, anthropic.error.request_id], ["error", "not_found_error", "msg-err-1"]);

    // An upstream that refuses: the engine's error status, counted under the agent and model.
    const failed = await fetch(`${server.base}/v1/chat/completions`, { method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "upstream-fails" }] }) });
    assert.ok(failed.status >= 400 && failed.status !== 404, `engine failure status ${failed.status}`);
    const body = (await failed.json()) as { error: { request_id: string } };
    assert.equal(body.error.request_id, failed.headers.get("x-request-id"));

    const after = await scrape();
    const moved = (labels: Record<string, string>): number => sampleValue(after, "local_ai_requests_total", labels) - sampleValue(before, "local_ai_requests_total", labels);
    assert.equal(moved({ agent: "none", model: "none", endpoint: "/v1/chat/completions", key: "default", status: "404" }), 1);
    assert.equal(moved({ agent: "none", model: "none", endpoint: "/v1/responses", key: "default", status: "404" }), 1);
    assert.equal(moved({ agent: "none", model: "none", endpoint: "/v1/messages", key: "default", status: "404" }), 1);
    assert.equal(moved({ ...chatLabels, status: String(failed.status) }), 1);
  });

  it("a client that goes away mid-stream is counted as a disconnect (and logged so)", async () => {
    const before = await scrape();
    const seen = upstream.requests.length;
    const controller = new AbortController();
    const response = await fetch(`${server.base}/v1/chat/completions`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ model: "assistant", stream: true, messages: [{ role: "user", content: "hang" }] }),
      signal: controller.signal,
    });
    const id = response.headers.get("x-request-id") ?? "";
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes("Hello")) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    // The upstream sees the cancelled turn's request close: by then the server counted the disconnect.
    const hung = upstream.requests.slice(seen).find((request) => request.url.endsWith("/chat/completions"));
    assert.ok(hung !== undefined);
    assert.equal((await hung.closed).finished, false);
    const after = await scrape();
    assert.equal(sampleValue(after, "local_ai_client_disconnects_total", chatLabels) - sampleValue(before, "local_ai_client_disconnects_total", chatLabels), 1);
    await server.proc.waitForStderr(new RegExp(`"request_id":"${id}".*"disconnected":true`));
  });

  it("no label carries a session id or a raw path: ids stay out, route patterns go in", async () => {
    const session = await fetch(`${server.base}/v1/chat/completions`, { method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: JSON.stringify({ model: "assistant", session_id: "sess-secret-42", messages: [{ role: "user", content: "Hi" }] }) });
    assert.equal(session.status, 200);
    assert.equal((await fetch(`${server.base}/v1/responses/resp_probe123`, { headers: auth })).status, 404);
    assert.equal((await fetch(`${server.base}/no/such/path-xyz`, { headers: auth })).status, 404);
    const families = await scrape();
    const values = labelValues(families);
    for (const secret of ["sess-secret-42", "resp_probe123", "path-xyz", TOKEN]) assert.ok(!values.some((value) => value.includes(secret)), `${secret} in a label`);
    assert.equal(sampleValue(families, "local_ai_requests_total", { agent: "none", model: "none", endpoint: "/v1/responses/:id", key: "default", status: "404" }), 1);
    assert.equal(sampleValue(families, "local_ai_requests_total", { agent: "none", model: "none", endpoint: "unmatched", key: "none", status: "404" }), 1);
  });
});
