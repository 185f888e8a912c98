import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StatelessTurnRequest } from "../../src/agent/stateless-turn.js";
import type { TurnOutcome } from "../../src/agent/turn-outcome.js";
import type { RuntimeHealth } from "../../src/diagnostics/runtime-health.js";
import { createHttpApp } from "../../src/http/app.js";
import type { HttpDeps, TurnRunner } from "../../src/http/http-deps.js";
import { captureLogger } from "../helpers/capture-logger.js";

/** Counts the turns that got through: a guarded request must never reach the runner. */
class CountingRunner implements TurnRunner {
  turns: StatelessTurnRequest[] = [];
  runTurn(): Promise<never> {
    return Promise.reject(new Error("the Responses API runs no session turns"));
  }
  runStateless(request: StatelessTurnRequest): Promise<TurnOutcome> {
    this.turns.push(request);
    return Promise.resolve({ finish_reason: "stop", response: "", reasoning: "", usage: { input_tokens: 1, cached_input_tokens: null, output_tokens: 0, reasoning_tokens: null, prompt_ms: null }, session_id: null, trace_id: "t", warnings: [] });
  }
}

const READY: RuntimeHealth = { warmUp: "ready", defaultModel: "default", engines: { default: { state: "ready", degradationTier: "NORMAL" } }, tools: [] };

function makeApp(runner: TurnRunner, bearerToken: string | null = "s3cret") {
  const deps: HttpDeps = {
    settings: { host: "127.0.0.1", port: 8080, bearerToken, corsOrigins: [], allowedHosts: [], maxBodyBytes: 1024, sessionQueue: false },
    agents: { assistant: "default" },
    runner: () => runner,
    health: () => READY,
    version: "0.0.0-test",
    logger: captureLogger().logger,
  };
  return createHttpApp(deps).app;
}

const AUTH = { Host: "127.0.0.1:8080", Authorization: "Bearer s3cret", "Content-Type": "application/json" };
const body = JSON.stringify({ model: "assistant", input: "hi" });

describe("the Responses routes sit behind the same guards as chat completions", () => {
  it("bearer token, Host check, cross-site guard and body limit refuse before any turn runs", async () => {
    const runner = new CountingRunner();
    const app = makeApp(runner);
    const cases: Array<[string, RequestInit, number, string]> = [
      ["/v1/responses", { method: "POST", headers: { ...AUTH, Authorization: "Bearer wrong" }, body }, 401, "unauthorized"],
      ["/v1/responses", { method: "POST", headers: { ...AUTH, Host: "evil.example:8080" }, body }, 403, "host_not_allowed"],
      ["/v1/responses", { method: "POST", headers: { ...AUTH, Origin: "https://evil.example" }, body }, 403, "origin_not_allowed"],
      ["/v1/responses", { method: "POST", headers: { ...AUTH, "Content-Type": "text/plain" }, body }, 415, "unsupported_media_type"],
      ["/v1/responses", { method: "POST", headers: AUTH, body: JSON.stringify({ model: "assistant", input: "x".repeat(2000) }) }, 413, "payload_too_large"],
      ["/v1/responses/input_tokens", { method: "POST", headers: { ...AUTH, Authorization: "Bearer wrong" }, body }, 401, "unauthorized"],
      ["/v1/responses/resp_000000000000000000000000", { method: "GET", headers: { Host: AUTH.Host } }, 401, "unauthorized"],
      ["/v1/responses/resp_000000000000000000000000", { method: "DELETE", headers: { ...AUTH, Origin: "https://evil.example" } }, 403, "origin_not_allowed"],
    ];
    for (const [path, init, status, code] of cases) {
      const res = await app.request(path, init);
      const error = ((await res.json()) as { error: { code: string } }).error;
      assert.deepEqual([res.status, error.code], [status, code], `${init.method} ${path}`);
    }
    assert.equal(runner.turns.length, 0);
    const ok = await app.request("/v1/responses", { method: "POST", headers: AUTH, body });
    assert.equal(ok.status, 200);
    assert.equal(runner.turns.length, 1);
  });

  it("without a store: store is not written, and previous_response_id / GET find nothing (404 naming the field)", async () => {
    const app = makeApp(new CountingRunner(), null);
    const headers = { Host: AUTH.Host, "Content-Type": "application/json" };
    const chained = await app.request("/v1/responses", { method: "POST", headers, body: JSON.stringify({ model: "assistant", input: "hi", previous_response_id: "resp_000000000000000000000001" }) });
    assert.deepEqual([chained.status, ((await chained.json()) as { error: { param: string } }).error.param], [404, "previous_response_id"]);
    const got = await app.request("/v1/responses/resp_000000000000000000000001", { headers: { Host: AUTH.Host } });
    assert.deepEqual([got.status, ((await got.json()) as { error: { param: string } }).error.param], [404, "response_id"]);
  });
});
