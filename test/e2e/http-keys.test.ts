// Scoped API keys (http.keys) through the built CLI's serve-http, with the official `openai` and
// `@anthropic-ai/sdk` clients over a scripted upstream and the real MCP fixture server: refusals
// in each dialect's shape, allowed requests, a forbidden tool failing inside the turn, both
// limits answering 429 with Retry-After, the bearer token keeping every right, startup errors.
import assert from "node:assert/strict";
import { chmod, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { CliProcess } from "../helpers/cli-process.js";
import { configYaml, mcpServer, openaiModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { FIXTURE_SERVER_PATH } from "../helpers/mcp-servers.js";
import { startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

const ADMIN = "admin-token-for-every-right";
const LIMITED = "limited-token";
const CLAUDE = "claude-token-from-a-file";
const METERED = "metered-token-from-env";
const EMBEDDER = "embedder-token";

let server: HttpServer;
let upstream: AgentUpstream;
const openai = (apiKey: string): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey, maxRetries: 0, timeout: 60_000 });
const anthropic = (apiKey: string): Anthropic => new Anthropic({ baseURL: server.base, apiKey, maxRetries: 0, timeout: 60_000 });
const hello = [{ role: "user" as const, content: "hi" }];

function config(upstreamUrl: string, keys: unknown[]): string {
  return configYaml({
    llama: { models: { up: openaiModel(upstreamUrl, "test-model") } },
    agents: { small: { model: "up", temperature: 0 }, big: { model: "up", temperature: 0 } },
    mcp: { servers: { fixture: mcpServer({ command: process.execPath, args: [FIXTURE_SERVER_PATH] }) } },
    http: { keys },
  });
}

/** The API error a call must end in (the SDKs throw their own classes, which carry status, headers and body). */
async function refusal<T extends { status: number | undefined; headers: Headers | undefined; error: unknown }>(call: Promise<unknown>): Promise<T> {
  try {
    await call;
  } catch (error) {
    if (typeof (error as { status?: unknown }).status !== "number") throw error;
    // Every refusal carries the request's id (docs/operations.md); checked here, then set aside so
    // the tests compare the rest of the body exactly.
    const refused = error as T;
    const body = refused.error as { request_id?: unknown; error?: { request_id?: unknown } };
    const inner = body.error !== undefined && typeof body.error === "object" ? body.error : body;
    assert.equal(inner.request_id, refused.headers?.get("x-request-id"));
    delete inner.request_id;
    return refused;
  }
  throw new Error("the request was not refused");
}
type OpenAiRefusal = InstanceType<typeof OpenAI.APIError>;
type AnthropicRefusal = InstanceType<typeof Anthropic.APIError>;

before(async () => {
  upstream = await startAgentUpstream();
  server = await startHttpServer(
    config(upstream.baseUrl, [
      { name: "limited", token: LIMITED, models: ["small"], endpoints: ["/v1/chat/*"], tools: ["fixture/echo"], max_concurrent: 1 },
      { name: "claude", token_file: "claude.token", models: ["small"], endpoints: ["/v1/messages*"], tools: ["echo"] },
      { name: "metered", token_env: "METERED_TOKEN", requests_per_minute: 2 },
      { name: "embedder", token: EMBEDDER, models: ["small"], endpoints: ["/v1/embeddings", "/v1/completions", "/v1/responses"] },
    ]),
    [],
    // debug: every refusal and limit is logged, so the check that no token reaches the log sees them all.
    { LOCAL_AI_TOKEN: ADMIN, METERED_TOKEN: METERED, LOCAL_AI_LOG_LEVEL: "debug" },
    async (dir) => {
      await writeFile(path.join(dir, "claude.token"), `${CLAUDE}\n`);
      await chmod(path.join(dir, "claude.token"), 0o600);
    },
  );
});

after(async () => {
  await server?.stop();
  await upstream?.close();
});

describe("scoped API keys: the openai client", () => {
  it("GET /v1/models lists only the key's models; another model by id is 403 permission_error", async () => {
    assert.deepEqual((await openai(LIMITED).models.list()).data.map((model) => model.id), ["small"]);
    assert.deepEqual((await openai(ADMIN).models.list()).data.map((model) => model.id), ["small", "big"]);
    const refused = await refusal<OpenAiRefusal>(openai(LIMITED).models.retrieve("big"));
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.error, { message: 'API key "limited" may not use the model "big"', type: "permission_error", param: "model", code: "permission_denied" });
  });

  it("a model the key may not use: 403 before any work (the upstream saw nothing)", async () => {
    const before = upstream.chats().length;
    const refused = await refusal<OpenAiRefusal>(openai(LIMITED).chat.completions.create({ model: "big", messages: hello }));
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.error, { message: 'API key "limited" may not use the model "big"', type: "permission_error", param: "model", code: "permission_denied" });
    assert.equal(upstream.chats().length, before);
  });

  it("endpoints outside the key's globs: 403 naming the endpoint (completions, embeddings, Responses)", async () => {
    const client = openai(LIMITED);
    // Each call made only when its turn comes: a refusal that lands while an earlier one is awaited would be unhandled.
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => client.completions.create({ model: "small", prompt: "x" }), "POST /v1/completions"],
      [() => client.embeddings.create({ model: "small", input: "x" }), "POST /v1/embeddings"],
      [() => client.responses.create({ model: "small", input: "x" }), "POST /v1/responses"],
    ];
    for (const [call, endpoint] of cases) {
      const refused = await refusal<OpenAiRefusal>(call());
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.error, { message: `API key "limited" may not use the endpoint ${endpoint}`, type: "permission_error", param: null, code: "permission_denied" });
    }
  });

  it("a model refused on completions, embeddings and Responses (a key that may call them), in the OpenAI shape", async () => {
    const client = openai(EMBEDDER);
    for (const call of [() => client.completions.create({ model: "big", prompt: "x" }), () => client.embeddings.create({ model: "big", input: "x" }), () => client.responses.create({ model: "big", input: "x" })]) {
      const refused = await refusal<OpenAiRefusal>(call());
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.error, { message: 'API key "embedder" may not use the model "big"', type: "permission_error", param: "model", code: "permission_denied" });
    }
  });

  it("an allowed request works; a tool the key may not run fails inside the turn (the model is told), an allowed one runs", async () => {
    upstream.push({ call: { id: "call_env", name: "env", arguments: {} } }, { call: { id: "call_echo", name: "echo", arguments: { message: "hi" } } }, { text: ["done"] });
    const completion = await openai(LIMITED).chat.completions.create({ model: "small", messages: hello });
    assert.equal(completion.choices[0]?.message.content, "done");
    assert.equal(toolResultSent(upstream, "call_env"), 'Error (error): API key "limited" may not run the tool "env"');
    const echoed = toolResultSent(upstream, "call_echo") ?? "";
    assert.match(echoed, /hi/);
    assert.doesNotMatch(echoed, /^Error/);
  });

  it("max_concurrent 1: a second request while a stream runs is 429 with Retry-After; the slot is free once the stream is gone", async () => {
    upstream.push({ hang: ["partial"] });
    const abort = new AbortController();
    const stream = await openai(LIMITED).chat.completions.create({ model: "small", messages: hello, stream: true }, { signal: abort.signal });
    const iterator = stream[Symbol.asyncIterator]();
    // The first content chunk: the request is running (an event, not a sleep).
    for (;;) {
      const next = await iterator.next();
      assert.equal(next.done, false);
      if (next.value.choices[0]?.delta.content === "partial") break;
    }
    const refused = await refusal<OpenAiRefusal>(openai(LIMITED).chat.completions.create({ model: "small", messages: hello }));
    assert.deepEqual([refused.status, refused.headers?.get("retry-after")], [429, "1"]);
    assert.deepEqual(refused.error, { message: 'API key "limited" is over its max_concurrent limit; retry after 1 s', type: "requests", param: null, code: "concurrency_limit_exceeded" });
    const hanging = upstream.chats().at(-1);
    assert.ok(hanging !== undefined);
    abort.abort();
    // The turn was cancelled: the server hung up on the upstream, after giving the slot back.
    await hanging.closed;
    upstream.push({ text: ["again"] });
    const again = await openai(LIMITED).chat.completions.create({ model: "small", messages: hello });
    assert.equal(again.choices[0]?.message.content, "again");
  });

  it("the full-rights bearer token still works: any model, any endpoint", async () => {
    upstream.push({ text: ["big answer"] });
    const completion = await openai(ADMIN).chat.completions.create({ model: "big", messages: hello });
    assert.equal(completion.choices[0]?.message.content, "big answer");
  });
});

describe("scoped API keys: the Anthropic client", () => {
  it("a model the key may not use: 403 permission_error in the Messages shape", async () => {
    const refused = await refusal<AnthropicRefusal>(anthropic(CLAUDE).messages.create({ model: "big", max_tokens: 16, messages: hello }));
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.error, { type: "error", error: { type: "permission_error", message: 'model: API key "claude" may not use the model "big"' } });
  });

  it("an endpoint the key may not use: 403 in the Messages shape", async () => {
    const refused = await refusal<AnthropicRefusal>(anthropic(LIMITED).messages.create({ model: "small", max_tokens: 16, messages: hello }));
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.error, { type: "error", error: { type: "permission_error", message: 'API key "limited" may not use the endpoint POST /v1/messages' } });
  });

  it("an allowed request (token from a mode-600 file, sent as x-api-key) works; a forbidden tool fails inside the turn", async () => {
    upstream.push({ call: { id: "call_env2", name: "env", arguments: {} } }, { text: ["fine"] });
    const message = await anthropic(CLAUDE).messages.create({ model: "small", max_tokens: 16, messages: hello });
    assert.deepEqual(message.content.map((block) => (block.type === "text" ? block.text : block.type)), ["fine"]);
    assert.equal(toolResultSent(upstream, "call_env2"), 'Error (error): API key "claude" may not run the tool "env"');
  });
});

describe("scoped API keys: a Bearer and an x-api-key together (issue 33)", () => {
  const send = (path: string, headers: Record<string, string>, body?: unknown): Promise<Response> =>
    fetch(`${server.base}${path}`, body === undefined ? { headers } : { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });
  const ids = async (response: Response): Promise<string[]> => ((await response.json()) as { data: Array<{ id: string }> }).data.map((model) => model.id);

  it("a wrong Bearer is 401 whatever x-api-key says; a valid Bearer with another x-api-key goes by the Bearer's key; x-api-key alone still works", async () => {
    const wrong = await send("/v1/models", { authorization: "Bearer not-a-key", "x-api-key": ADMIN });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get("www-authenticate"), 'Bearer realm="local-ai"');
    assert.equal(((await wrong.json()) as { error: { message: string } }).error.message, "Incorrect bearer token");
    const wrongMessages = await send("/v1/messages", { authorization: "Bearer not-a-key", "x-api-key": CLAUDE }, { model: "small", max_tokens: 16, messages: hello });
    assert.equal(wrongMessages.status, 401);
    await wrongMessages.body?.cancel();

    // Claude Code with a global ANTHROPIC_API_KEY: its x-api-key is some other key, the Bearer is this server's.
    const limited = await send("/v1/models", { authorization: `Bearer ${LIMITED}`, "x-api-key": ADMIN });
    assert.equal(limited.status, 200);
    assert.deepEqual(await ids(limited), ["small"], "the Bearer's scope, not the admin key's");
    const notAKey = await send("/v1/models", { authorization: `Bearer ${ADMIN}`, "x-api-key": "sk-ant-someone-elses" });
    assert.deepEqual(await ids(notAKey), ["small", "big"]);
    const forbidden = await send("/v1/messages", { authorization: `Bearer ${LIMITED}`, "x-api-key": CLAUDE }, { model: "small", max_tokens: 16, messages: hello });
    assert.equal(forbidden.status, 403);
    assert.equal(((await forbidden.json()) as { error: { message: string } }).error.message, 'API key "limited" may not use the endpoint POST /v1/messages');

    const alone = await send("/v1/models", { "x-api-key": CLAUDE });
    assert.equal(alone.status, 200);
    assert.deepEqual(await ids(alone), ["small"]);
    const unknownAlone = await send("/v1/models", { "x-api-key": "not-a-key" });
    assert.equal(unknownAlone.status, 401);
    await unknownAlone.body?.cancel();
  });
});

describe("scoped API keys: requests_per_minute", () => {
  it("the third request within a minute is 429 with Retry-After, in the OpenAI and the Messages shape", async () => {
    await openai(METERED).models.list();
    await openai(METERED).models.list();
    const refused = await refusal<OpenAiRefusal>(openai(METERED).chat.completions.create({ model: "small", messages: hello }));
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers?.get("retry-after"));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.deepEqual(refused.error, { message: `API key "metered" is over its requests_per_minute limit; retry after ${retryAfter} s`, type: "requests", param: null, code: "rate_limit_exceeded" });
    const anthropicRefused = await refusal<AnthropicRefusal>(anthropic(METERED).messages.create({ model: "small", max_tokens: 16, messages: hello }));
    assert.equal(anthropicRefused.status, 429);
    assert.ok(Number(anthropicRefused.headers?.get("retry-after")) >= 1);
    assert.equal((anthropicRefused.error as { error: { type: string } }).error.type, "rate_limit_error");
  });

  it("tokens never reach the log; key names do", () => {
    for (const token of [ADMIN, LIMITED, CLAUDE, METERED, EMBEDDER]) assert.ok(!server.proc.stderr.includes(token), "a token in the log");
    assert.match(server.proc.stderr, /"keys":\["limited","claude","metered","embedder"\]/);
  });
});

describe("http.keys: startup errors", { timeout: 120_000 }, () => {
  async function startupError(keys: unknown[], prepare?: (dir: string) => Promise<void>): Promise<string> {
    const { dir, configPath } = await tempConfig(config("http://127.0.0.1:9/v1", keys));
    await prepare?.(dir);
    const proc = new CliProcess(["serve-http", "--config", configPath, "--port", "0"], { cwd: dir });
    const { code } = await proc.exited;
    assert.equal(code, 1, proc.stderr);
    assert.doesNotMatch(proc.stderr, /\n\s+at /, "no stack trace");
    return proc.stderr;
  }

  it("duplicate names, two keys with one token, a token file others may read: a clear error each, exit 1, no token in it", async () => {
    assert.match(await startupError([{ name: "a", token: "x1" }, { name: "a", token: "x2" }]), /http\.keys\.1\.name: duplicate key name "a"/);
    const same = await startupError([{ name: "a", token: "same-secret" }, { name: "b", token: "same-secret" }]);
    assert.match(same, /API keys "a" and "b" have the same token: each key needs its own/);
    assert.doesNotMatch(same, /same-secret/);
    const open = await startupError([{ name: "a", token_file: "a.token" }], async (dir) => {
      await writeFile(path.join(dir, "a.token"), "t\n");
      await chmod(path.join(dir, "a.token"), 0o644);
    });
    assert.match(open, /http\.keys\[0\] \("a"\) token_file .*a\.token is readable by other users \(mode 644\); chmod 600 it/);
  });
});
