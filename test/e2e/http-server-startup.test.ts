import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { before, describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { agentsYaml, freePort, startHttpServer } from "../helpers/http-cli-server.js";
import { tempConfig } from "../helpers/temp-config.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml } from "../helpers/config-yaml.js";

let demo = "";
let tiny = "";
before(async () => {
  [demo, tiny] = await Promise.all([ensureFixture("demo"), ensureFixture("tiny", { seed: 3 })]);
});

/** Runs serve-http to its exit; startup failures must be a short message and exit code 1, no stack. */
async function runToExit(args: string[], cwd?: string): Promise<{ code: number | null; stderr: string }> {
  const proc = new CliProcess(["serve-http", ...args], cwd === undefined ? {} : { cwd });
  const { code } = await proc.exited;
  assert.doesNotMatch(proc.stderr, /\n\s+at /, "no stack trace");
  return { code, stderr: proc.stderr };
}

describe("serve-http startup and shutdown (built CLI)", () => {
  it("a port in use is a one-line error and exit 1", async () => {
    const blocker: Server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
    try {
      const { configPath, dir } = await tempConfig(agentsYaml(demo));
      const { code, stderr } = await runToExit(["--config", configPath, "--port", String(port)], dir);
      assert.equal(code, 1);
      assert.equal(stderr.trim().split("\n").length, 1, stderr);
      assert.match(stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is already in use`));
    } finally {
      blocker.close();
    }
  });

  it("a missing or invalid config is a clear error and exit 1", async () => {
    const { dir } = await tempConfig("");
    const missing = await runToExit(["--config", `${dir}/nope.yaml`], dir);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^local-ai serve-http: no config file at .*nope\.yaml/);
    const { configPath } = await tempConfig("http:\n  prot: 1\n");
    const invalid = await runToExit(["--config", configPath], dir);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /invalid config/);
    assert.match(invalid.stderr, /http/);
  });

  it("--port equal to a llama-server model's port is config_invalid naming both keys", async () => {
    const yaml = configYaml({ llama: { models: { default: { engine: "llama-server", path: demo, port: 18555 } } }, agents: { assistant: {} } });
    const { configPath, dir } = await tempConfig(yaml);
    const { code, stderr } = await runToExit(["--config", configPath, "--port", "18555"], dir);
    assert.equal(code, 1);
    assert.match(stderr, /http\.port/);
    assert.match(stderr, /llama\.models\.default\.port/);
  });

  it("a failed warm-up keeps serving: /health 503 down with the reason; a chat gets 503 with an OpenAI error", async () => {
    const { configPath, dir } = await tempConfig(agentsYaml(`${tiny}.missing.gguf`));
    const port = await freePort();
    const proc = new CliProcess(["serve-http", "--config", configPath, "--port", String(port)], { cwd: dir });
    const base = `http://127.0.0.1:${port}`;
    // The failure is logged (an error: visible at the tests' warn level) once /health says so.
    await proc.waitForStderr(/warm-up failed/, 20_000);
    const res = await fetch(`${base}/health`);
    const health = (await res.json()) as { status?: string; warm_up?: string };
    assert.deepEqual([res.status, health.status], [503, "down"], proc.stderr);
    // The reason is there; the file path is not (no token was sent: /health redacts paths).
    assert.match(health.warm_up ?? "", /no file at <path>/);
    assert.ok(!JSON.stringify(health).includes(tiny), JSON.stringify(health));
    const chat = await fetch(`${base}/v1/chat/completions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }) });
    assert.equal(chat.status, 503);
    assert.equal(((await chat.json()) as { error: { code: string } }).error.code, "model_missing");
    proc.child.kill("SIGTERM");
    assert.equal((await proc.exited).code, 0);
  });

  it("warns when bound beyond loopback without a token", async () => {
    const server = await startHttpServer(agentsYaml(demo), ["--host", "0.0.0.0"]);
    assert.match(server.proc.stderr, /non-loopback address without a bearer token/);
    assert.equal((await server.stop()).code, 0);
  });

  it("SIGTERM with a turn in flight: the turn is cancelled within the grace period, exit 0", async () => {
    // Info logs: "serve-http stopping" says when it stopped accepting.
    const server = await startHttpServer(agentsYaml(demo, tiny), [], { LOCAL_AI_LOG_LEVEL: "info" });
    const res = await fetch(`${server.base}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      // A turn that outlives the grace period: far more tokens than the tiny model makes in 5 s.
      body: JSON.stringify({ model: "talker", messages: [{ role: "user", content: "go" }], stream: true, max_tokens: 1_000_000 }),
    });
    const reader = res.body?.getReader();
    await reader?.read();
    const started = Date.now();
    server.proc.child.kill("SIGTERM");
    // Stopped accepting: a new connection is refused while the in-flight turn winds down.
    await server.proc.waitForStderr(/serve-http stopping/);
    await assert.rejects(fetch(`${server.base}/health`));
    let text = "";
    const decoder = new TextDecoder();
    for (;;) {
      const part = await reader?.read().catch(() => ({ done: true, value: undefined }));
      if (part === undefined || part.done) break;
      text += decoder.decode(part.value);
    }
    const { code } = await server.proc.exited;
    assert.equal(code, 0, server.proc.stderr);
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 12_000, `shutdown took ${elapsed} ms`);
    assert.ok(elapsed > 4_000, "the turn was given the grace period first");
    assert.doesNotMatch(text, /\[DONE\]/);
  });
});
