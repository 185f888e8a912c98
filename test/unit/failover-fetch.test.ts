// The failover logic of the openai engine's endpoints (failover-fetch.ts) with a fetch double: the
// e2e test (openai-failover.test.ts) runs it against real upstreams.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FailoverFetch } from "../../src/engine/openai/failover-fetch.js";
import { captureLogger } from "../helpers/capture-logger.js";

const refused = (): Error => new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) });

function recording(answer: (url: string) => Response | Error): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const fetchDouble = (async (input: string | URL | Request) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    urls.push(url);
    const result = answer(url);
    if (result instanceof Error) throw result;
    return result;
  }) as typeof fetch;
  return { fetch: fetchDouble, urls };
}

describe("FailoverFetch", () => {
  it("keeps the path, goes to the next endpoint only on a connection failure, and skips an open circuit without connecting", async () => {
    const inner = recording((url) => (url.startsWith("http://a") ? refused() : new Response("ok")));
    const failover = new FailoverFetch(["http://a/v1/", "http://b/v1"], captureLogger().logger, inner.fetch, { failureThreshold: 2, windowMs: 60_000, cooldownMs: 60_000 });
    for (let i = 0; i < 3; i++) assert.equal(await (await failover.fetch("http://a/v1/chat/completions", { method: "POST", body: "{}" })).text(), "ok");
    assert.deepEqual(inner.urls, ["http://a/v1/chat/completions", "http://b/v1/chat/completions", "http://a/v1/chat/completions", "http://b/v1/chat/completions", "http://b/v1/chat/completions"]);
    assert.deepEqual(failover.states(), [{ base_url: "http://a/v1", circuit: "open" }, { base_url: "http://b/v1", circuit: "closed" }]);
  });

  it("an HTTP error answer is returned as it is; an aborted request is not sent elsewhere; all unreachable names each endpoint", async () => {
    const answering = recording(() => new Response("no", { status: 400 }));
    const one = new FailoverFetch(["http://a/v1", "http://b/v1"], captureLogger().logger, answering.fetch);
    assert.equal((await one.fetch("http://a/v1/models")).status, 400);
    assert.deepEqual(answering.urls, ["http://a/v1/models"]);

    const controller = new AbortController();
    const aborting = recording(() => {
      controller.abort();
      return new DOMException("aborted", "AbortError");
    });
    const two = new FailoverFetch(["http://a/v1", "http://b/v1"], captureLogger().logger, aborting.fetch);
    await assert.rejects(two.fetch("http://a/v1/models", { signal: controller.signal }), { name: "AbortError" });
    assert.deepEqual(aborting.urls, ["http://a/v1/models"]);

    const down = new FailoverFetch(["http://a/v1", "http://b/v1"], captureLogger().logger, recording(refused).fetch);
    await assert.rejects(down.fetch("http://a/v1/models"), { message: "no endpoint could be reached: http://a/v1: ECONNREFUSED; http://b/v1: ECONNREFUSED" });
  });
});
