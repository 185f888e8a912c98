import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { freePort, startHttpServer } from "../helpers/http-cli-server.js";
import { FIXTURE_SERVER_PATH } from "../helpers/mcp-servers.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml, localModel, mcpServer } from "../helpers/config-yaml.js";

describe("serve-http during a slow tool call (built CLI, real MCP server)", () => {
  it("sends only `: keep-alive` comments between standard chunks, then the answer and [DONE]", async () => {
    const yaml = configYaml({
      llama: { models: { default: localModel(await ensureFixture("demo", { toolMode: true })) } },
      agents: { assistant: { temperature: 0, tools: ["echo"] } },
      mcp: { servers: { fixture: mcpServer({ command: process.execPath, args: [FIXTURE_SERVER_PATH, "--slow-echo-ms", "1500"] }) } },
    });
    const server = await startHttpServer(yaml, [], { LOCAL_AI_HTTP_KEEPALIVE_MS: "200" });
    try {
      const response = await fetch(`${server.base}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "assistant", stream: true, session_id: "slow", messages: [{ role: "user", content: `${DEMO_TOOL_TRIGGER} hi` }] }),
      });
      assert.equal(response.status, 200);
      const body = await response.text();
      const keepAlives = body.split("\n").filter((line) => line === ": keep-alive").length;
      assert.ok(keepAlives >= 3, `keep-alive comments while the 1.5 s tool ran (got ${keepAlives})`);
      assert.doesNotMatch(body, /^event:/m, "no named events in the default stream");
      const data = body.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6));
      assert.equal(data.at(-1), "[DONE]");
      const content = data
        .slice(0, -1)
        .map((json) => JSON.parse(json) as { object: string; choices: Array<{ delta: { content?: string } }> })
        .map((chunk) => {
          assert.equal(chunk.object, "chat.completion.chunk");
          return chunk.choices[0]?.delta.content ?? "";
        })
        .join("");
      assert.equal(content, DEMO_SENTENCE);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });
});

describe("serve-http with its engine down (built CLI)", () => {
  it("keeps serving: /health is 503 down with the reason, chat answers 503 in OpenAI shape", async () => {
    const { dir, configPath } = await tempConfig(
      configYaml({
        llama: { binary: "/nonexistent/llama-server", models: { default: { engine: "llama-server", path: await ensureFixture("demo"), port: await freePort() } } },
        agents: { assistant: {} },
      }),
    );
    const port = await freePort();
    const proc = new CliProcess(["serve-http", "--config", configPath, "--port", String(port)], { cwd: dir });
    const base = `http://127.0.0.1:${port}`;
    // The failure is logged (an error: visible at the tests' warn level) once /health says so.
    await proc.waitForStderr(/warm-up failed/, 20_000);
    const response = await fetch(`${base}/health`);
    const health = { status: response.status, body: (await response.json()) as Record<string, unknown> };
    assert.equal(health.status, 503, JSON.stringify(health.body));
    assert.equal(health.body.status, "down");
    assert.match(JSON.stringify(health.body), /llama-server/);
    const chat = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(chat.status, 503);
    const error = (await chat.json()) as { error: { message: string; type: string; code: string } };
    assert.equal(error.error.type, "server_error");
    assert.equal(error.error.code, "binary_missing");
    assert.match(error.error.message, /nonexistent/);
    proc.kill("SIGTERM");
    assert.equal((await proc.exited).code, 0);
  });
});
