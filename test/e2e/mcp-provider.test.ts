import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { McpToolProvider } from "../../src/tools/mcp/mcp-tool-provider.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { alive, childPids, fixtureServer, serverConfig, waitUntil } from "../helpers/mcp-servers.js";

/**
 * McpToolProvider against our SDK-built fixture server (test/helpers/mcp-test-server.ts): the
 * paths the npm servers cannot show on demand. Real processes, real stdio, the real SDK.
 */
describe("McpToolProvider with the fixture server", { timeout: 60_000 }, () => {
  const { logger, records } = captureLogger("debug");
  let provider: McpToolProvider;

  const stderrOf = (server: string): string[] =>
    records()
      .filter((r) => r.server === server && r.stream === "stderr")
      .map((r) => String(r.msg));

  before(async () => {
    provider = new McpToolProvider(
      {
        fixture: fixtureServer(["--page-size", "2"], { timeout_ms: 10_000 }),
        broken: fixtureServer(["--fail-start"]),
        missing: serverConfig([], { command: "/nonexistent/mcp-server" }),
        slow: fixtureServer([], { timeout_ms: 300, requires_approval: ["wait", "wiat"] }),
      },
      { logger, maxOutputBytes: 1000 },
    );
    // Concurrent callers share one start.
    await Promise.all([provider.start(), provider.start()]);
  });

  after(async () => {
    await provider.close();
  });

  it("one failing server does not stop the others; status() says which failed and why", () => {
    const status = new Map(provider.status().map((s) => [s.server, s]));
    assert.equal(status.get("fixture")?.state, "ready");
    assert.equal(status.get("slow")?.state, "ready");
    assert.equal(status.get("broken")?.state, "failed");
    assert.match(status.get("broken")?.error ?? "", /refusing to start \(bad configuration\)/);
    assert.equal(status.get("missing")?.state, "failed");
    assert.match(status.get("missing")?.error ?? "", /ENOENT/);
    assert.equal(status.get("broken")?.tools, 0);
    assert.ok(provider.list(["broken/*", "missing/*"]).length === 0);
  });

  it("flags approvals by remote name and warns about names the server does not offer", () => {
    assert.equal(provider.list(["slow_wait"])[0]?.requiresApproval, true);
    assert.equal(provider.list(["wait"])[0]?.requiresApproval, false);
    const warning = records().find((r) => r.level === 40 && r.server === "slow" && String(r.msg).includes("requires_approval"));
    assert.deepEqual(warning?.unknown, ["wiat"]);
  });

  it("follows tools/list pagination and leaves out task-only tools", () => {
    const remote = provider.list(["fixture/*"]).map((t) => t.remoteName);
    assert.equal(remote.length, 10);
    assert.ok(remote.includes("structured") && !remote.includes("task-only"));
  });

  it("sanitizes names and calls the tool by its remote name", async () => {
    const names = provider.list(["fixture/*"]).map((t) => t.name);
    assert.ok(names.includes("get_weather"));
    const long = names.find((n) => n.startsWith("long_"));
    assert.equal(long?.length, 64);
    assert.deepEqual(await provider.call("get_weather", {}, {}), { status: "ok", content: "sunny", retryable: false });
    // The second fixture instance clashes on every name.
    assert.equal(provider.list(["slow/echo"])[0]?.name, "slow_echo");
    assert.equal((await provider.call("slow_echo", { message: "x" }, {})).content, "fixture: x");
  });

  it("caps output, summarizes images, maps isError and structured content", async () => {
    const big = await provider.call("big", { bytes: 5000 }, {});
    assert.equal(big.content, `${"y".repeat(1000)}…[truncated 4000 bytes]`);
    assert.equal((await provider.call("image", {}, {})).content, "here:\n[image: image/png, 300 bytes]");
    assert.deepEqual(await provider.call("fail", {}, {}), { status: "error", content: "it failed on purpose", retryable: false });
    assert.equal((await provider.call("structured", {}, {})).content, '{"answer":42}');
  });

  it("answers an unknown tool with an error that lists the available ones", async () => {
    const result = await provider.call("nope", {}, {});
    assert.equal(result.status, "error");
    assert.equal(result.retryable, false);
    assert.match(result.content, /unknown tool "nope"; available tools: echo, get_weather/);
  });

  it("cancels on the server side when the signal aborts", async () => {
    const controller = new AbortController();
    // Cancel once the server runs the call (its stderr says so), not on a timer racing the request.
    const running = stderrOf("fixture").filter((l) => l.startsWith("fixture: waiting request")).length;
    void waitUntil(() => stderrOf("fixture").filter((l) => l.startsWith("fixture: waiting request")).length > running, 10_000).then(() => controller.abort());
    const started = Date.now();
    const result = await provider.call("wait", {}, { signal: controller.signal });
    assert.equal(result.status, "cancelled");
    assert.ok(Date.now() - started < 1000);
    // The fixture writes this to its stderr from the handler's own abort signal.
    assert.ok(await waitUntil(() => stderrOf("fixture").some((l) => l.startsWith("fixture: cancelled request")), 3000));
    const already = new AbortController();
    already.abort();
    assert.equal((await provider.call("wait", {}, { signal: already.signal })).status, "cancelled");
  });

  it("times out after timeout_ms and cancels on the server side too", async () => {
    const started = Date.now();
    const result = await provider.call("slow_wait", {}, {});
    assert.equal(result.status, "timeout");
    assert.equal(result.retryable, true);
    assert.match(result.content, /"slow_wait" did not finish within 300 ms/);
    assert.ok(Date.now() - started < 2000);
    assert.ok(await waitUntil(() => stderrOf("slow").some((l) => l.startsWith("fixture: cancelled request")), 3000));
  });

  it("a crash during a call is that call's error (retryable, with stderr); the next call restarts", async () => {
    const pid = provider.status().find((s) => s.server === "fixture")?.pid;
    const crashed = await provider.call("crash", {}, {});
    assert.equal(crashed.status, "error");
    assert.equal(crashed.retryable, true);
    assert.match(crashed.content, /exited unexpectedly[\s\S]*crashing on purpose/);
    assert.ok(await waitUntil(() => !alive(pid!), 3000));
    assert.deepEqual(await provider.call("echo", { message: "again" }, {}), { status: "ok", content: "fixture: again", retryable: false });
  });

  it("start() with an aborted signal rejects for that caller only", async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(provider.start(controller.signal));
    await provider.start();
  });

  it("close() leaves no child process behind", async () => {
    await provider.close();
    assert.deepEqual(await childPids(), []);
  });
});

describe("McpToolProvider close during start", { timeout: 30_000 }, () => {
  it("ends children spawned by a start still in progress", async () => {
    const { logger } = captureLogger("debug");
    const provider = new McpToolProvider({ a: fixtureServer(), b: fixtureServer() }, { logger });
    const starting = provider.start();
    // Lets the start get as far as spawning (pacing, not a synchronization): wherever it is, close
    // must end what it spawned.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await provider.close();
    await starting;
    assert.deepEqual(await childPids(), []);
    assert.ok(provider.status().every((s) => s.state === "closed"));
    assert.deepEqual(provider.list(["*"]), []);
  });
});
