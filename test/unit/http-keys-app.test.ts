// Scoped API keys inside the Hono app (app.request, a scripted runner): the key name on the
// request context (what metrics and logs read), the tool scope handed to the turn, and a
// max_concurrent slot held by a stream until it has ended or been cancelled.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StatelessTurnOptions } from "../../src/agent/turn-request.js";
import type { StatelessTurnRequest } from "../../src/agent/stateless-turn.js";
import type { TurnOutcome } from "../../src/agent/turn-outcome.js";
import { createHttpApp } from "../../src/http/app.js";
import type { HttpSettings, TurnRunner } from "../../src/http/http-deps.js";
import { fullRightsKey } from "../../src/http/keys/api-key.js";
import { requestKeyName } from "../../src/http/request/request-key.js";
import type { ToolScope } from "../../src/tools/scoped-tool-provider.js";
import { captureLogger } from "../helpers/capture-logger.js";

/** Each turn waits for the test to let it finish (`finish()`), so a test holds a request open on an event of its own. */
class GatedRunner implements TurnRunner {
  readonly scopes: Array<ToolScope | undefined> = [];
  private readonly gates: Array<() => void> = [];
  private count = 0;
  private readonly waiters: Array<{ n: number; resolve: () => void }> = [];

  runTurn(): never {
    throw new Error("session turns are not used here");
  }

  async runStateless(_request: StatelessTurnRequest, options: StatelessTurnOptions): Promise<TurnOutcome> {
    this.scopes.push(options.toolScope);
    options.emit({ event: "run_start", user_input: "hi", trace_id: "t", session_id: null, agent: "assistant" });
    // A stream's answer starts at the first model step.
    options.emit({ event: "llm_start", step: 0 });
    this.count += 1;
    for (const waiter of this.waiters.filter((w) => w.n <= this.count)) waiter.resolve();
    await new Promise<void>((resolve) => this.gates.push(resolve));
    return { response: "ok", trace_id: "t", warnings: [], finish_reason: "stop", reasoning: "", usage: { input_tokens: 1, output_tokens: 1 }, session_id: null } as unknown as TurnOutcome;
  }

  /** Resolves once `n` turns have started in all. */
  started(n: number): Promise<void> {
    return new Promise((resolve) => (this.count >= n ? resolve() : this.waiters.push({ n, resolve })));
  }

  finishAll(): void {
    for (const gate of this.gates.splice(0)) gate();
  }
}

function makeApp(runner: TurnRunner, settings: Partial<HttpSettings>) {
  const { app } = createHttpApp({
    settings: { host: "127.0.0.1", port: 8080, bearerToken: null, corsOrigins: [], allowedHosts: [], maxBodyBytes: 4096, sessionQueue: false, ...settings },
    agents: { assistant: "default" },
    runner: () => runner,
    health: () => ({ warmUp: "ready", defaultModel: "default", engines: {}, tools: [] }),
    version: "0",
    logger: captureLogger().logger,
  });
  // A route of the test's own behind the same /v1/* middleware: what the metrics labels will read.
  app.get("/v1/test/key-name", (c) => c.text(requestKeyName(c)));
  return app;
}

const HOST = { Host: "127.0.0.1:8080" };
const get = (token?: string): RequestInit => ({ headers: { ...HOST, ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) } });
const chat = (token: string, stream: boolean): RequestInit => ({
  method: "POST",
  headers: { ...HOST, "Content-Type": "application/json", Authorization: `Bearer ${token}` },
  body: JSON.stringify({ model: "assistant", stream, messages: [{ role: "user", content: "hi" }] }),
});

describe("keys in the app", () => {
  const ci = { ...fullRightsKey("ci", "ci-token"), tools: ["files/*"], maxConcurrent: 1 };

  it("the request context carries the key's name: default (the bearer token), a key's own, none without auth", async () => {
    const app = makeApp(new GatedRunner(), { bearerToken: "admin", keys: [ci] });
    assert.equal(await (await app.request("/v1/test/key-name", get("admin"))).text(), "default");
    assert.equal(await (await app.request("/v1/test/key-name", get("ci-token"))).text(), "ci");
    assert.equal((await app.request("/v1/test/key-name", get("wrong"))).status, 401);
    assert.equal(await (await makeApp(new GatedRunner(), {}).request("/v1/test/key-name", get())).text(), "none");
  });

  it("the key's tool scope goes down with the turn; the full-rights token sends none", async () => {
    const runner = new GatedRunner();
    const app = makeApp(runner, { bearerToken: "admin", keys: [ci] });
    const replies = [Promise.resolve(app.request("/v1/chat/completions", chat("ci-token", false))), Promise.resolve(app.request("/v1/chat/completions", chat("admin", false)))];
    await runner.started(2);
    runner.finishAll();
    assert.deepEqual((await Promise.all(replies)).map((reply) => reply.status), [200, 200]);
    assert.deepEqual(runner.scopes, [{ holder: 'API key "ci"', patterns: ["files/*"] }, undefined]);
  });

  it("max_concurrent: a stream holds its slot until it has ended; a cancelled stream gives it back", async () => {
    const runner = new GatedRunner();
    const app = makeApp(runner, { keys: [ci] });
    const streaming = await app.request("/v1/chat/completions", chat("ci-token", true));
    await runner.started(1);
    const refused = await app.request("/v1/chat/completions", chat("ci-token", false));
    assert.deepEqual([refused.status, refused.headers.get("retry-after")], [429, "1"]);
    const refusal = ((await refused.json()) as { error: { request_id?: string } }).error;
    assert.equal(refusal.request_id, refused.headers.get("x-request-id"));
    assert.deepEqual(refusal, { message: 'API key "ci" is over its max_concurrent limit; retry after 1 s', type: "requests", param: null, code: "concurrency_limit_exceeded", request_id: refusal.request_id });
    runner.finishAll();
    assert.match(await streaming.text(), /data: \[DONE\]/);

    const second = await app.request("/v1/chat/completions", chat("ci-token", true));
    assert.equal(second.status, 200, "the ended stream gave its slot back");
    await runner.started(2);
    await second.body?.cancel();
    const after = app.request("/v1/chat/completions", chat("ci-token", false));
    await runner.started(3);
    runner.finishAll();
    assert.equal((await after).status, 200, "the cancelled stream gave its slot back");
  });
});
