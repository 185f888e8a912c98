import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { McpToolProvider } from "../../src/tools/mcp/mcp-tool-provider.js";
import { TOOL_NAME_PATTERN } from "../../src/tools/tool-names.js";
import { captureLogger } from "../helpers/capture-logger.js";
import { alive, childPids, everythingServer, filesystemServer, tempRoot, waitUntil } from "../helpers/mcp-servers.js";

/**
 * The real thing: @modelcontextprotocol/server-everything and two server-filesystem instances
 * (two, so their tool names clash) over stdio through the official SDK client.
 */
/** Secrets our process may hold; none may be passed on to an MCP server. */
const SECRETS = {
  LOCAL_AI_TEST_SECRET: "must-not-leak",
  OPENAI_API_KEY: "sk-must-not-leak",
  LOCAL_AI_TOKEN: "token-must-not-leak",
  LLAMA_API_KEY: "llama-must-not-leak",
  AWS_SECRET_ACCESS_KEY: "aws-must-not-leak",
  NODE_OPTIONS: "--require /tmp/must-not-load.js",
};

describe("McpToolProvider with servers from npm", { timeout: 60_000 }, () => {
  const { logger, records } = captureLogger("debug");
  let provider: McpToolProvider;
  let root: string;
  let outside: string;

  const pidOf = (server: string): number => {
    const pid = provider.status().find((s) => s.server === server)?.pid;
    assert.ok(typeof pid === "number", `${server} has a pid`);
    return pid;
  };

  before(async () => {
    root = await tempRoot();
    outside = await tempRoot();
    await writeFile(path.join(root, "hello.txt"), "hello from the root\n");
    await writeFile(path.join(outside, "secret.txt"), "not for the model\n");
    await mkdir(path.join(root, "sub"));
    provider = new McpToolProvider(
      {
        // timeout_ms small enough for the timeout test, large next to echo's few milliseconds.
        everything: everythingServer({ timeout_ms: 2000, env: { FROM_CONFIG: "yes" } }),
        files: filesystemServer(root, { requires_approval: ["write_file"] }),
        files2: filesystemServer(path.join(root, "sub"), { requires_approval: true }),
      },
      { logger, env: { ...process.env, ...SECRETS } },
    );
    const started = Date.now();
    await provider.start();
    logger.info({ ms: Date.now() - started }, "started");
  });

  after(async () => {
    await provider.close();
  });

  it("starts every server and lists their tools under valid names", () => {
    assert.deepEqual(
      provider.status().map((s) => [s.server, s.state]),
      [
        ["everything", "ready"],
        ["files", "ready"],
        ["files2", "ready"],
      ],
    );
    const names = provider.list(["*"]).map((t) => t.name);
    for (const name of ["echo", "get-sum", "trigger-long-running-operation", "read_text_file", "write_file"]) assert.ok(names.includes(name), name);
    for (const name of names) assert.match(name, TOOL_NAME_PATTERN);
    assert.equal(new Set(names).size, names.length);
    // Task-only tools cannot run through tools/call, so they are not offered.
    assert.ok(!names.includes("simulate-research-query"));
  });

  it("resolves clashes: the first server in config order keeps the bare name", () => {
    const tools = provider.list(["*"]);
    const bare = tools.find((t) => t.name === "read_text_file");
    const scoped = tools.find((t) => t.name === "files2_read_text_file");
    assert.equal(bare?.server, "files");
    assert.equal(scoped?.server, "files2");
    assert.equal(scoped?.remoteName, "read_text_file");
    assert.ok(tools.filter((t) => t.server === "files2").every((t) => t.name === `files2_${t.remoteName}`));
  });

  it("flags approvals from requires_approval (a list of remote names, or true)", () => {
    const byName = new Map(provider.list(["*"]).map((t) => [t.name, t]));
    assert.equal(byName.get("write_file")?.requiresApproval, true);
    assert.equal(byName.get("read_text_file")?.requiresApproval, false);
    assert.equal(byName.get("files2_read_text_file")?.requiresApproval, true);
    assert.equal(byName.get("echo")?.requiresApproval, false);
  });

  it("filters by names, globs and server-scoped patterns", () => {
    const names = (patterns: string[]): string[] => provider.list(patterns).map((t) => t.name);
    assert.deepEqual(names(["echo", "get-s?m"]), ["echo", "get-sum"]);
    assert.deepEqual(names(["files2/read_text_file"]), ["files2_read_text_file"]);
    const files = provider.list(["files/*"]);
    assert.ok(files.length > 5 && files.every((t) => t.server === "files"));
    assert.deepEqual(names(["nothing-*"]), []);
  });

  it("calls echo and get-sum", async () => {
    assert.deepEqual(await provider.call("echo", { message: "héllo, wörld ✓" }, {}), { status: "ok", content: "Echo: héllo, wörld ✓", retryable: false });
    const sum = await provider.call("get-sum", { a: 2, b: 40 }, {});
    assert.equal(sum.status, "ok");
    assert.match(sum.content, /\b42\b/);
    const bad = await provider.call("get-sum", { a: "two" }, {});
    assert.equal(bad.status, "error");
    assert.equal(bad.retryable, false);
  });

  it("reads and writes files inside the root, and refuses a path outside it", async () => {
    const read = await provider.call("read_text_file", { path: path.join(root, "hello.txt") }, {});
    assert.deepEqual(read, { status: "ok", content: "hello from the root\n", retryable: false });
    const write = await provider.call("write_file", { path: path.join(root, "new.txt"), content: "written by a tool" }, {});
    assert.equal(write.status, "ok", write.content);
    assert.equal(await readFile(path.join(root, "new.txt"), "utf8"), "written by a tool");
    const denied = await provider.call("read_text_file", { path: path.join(outside, "secret.txt") }, {});
    assert.equal(denied.status, "error");
    assert.equal(denied.retryable, false);
    assert.match(denied.content, /outside allowed directories|Access denied/);
    assert.ok(!denied.content.includes("not for the model"));
  });

  it("gives servers an allow-listed environment plus their own env", async () => {
    const result = await provider.call("get-env", {}, {});
    const env = JSON.parse(result.content) as Record<string, string>;
    assert.equal(env.FROM_CONFIG, "yes");
    // Our own secrets (the upstream key, the HTTP token, anything else) never reach a tool server.
    for (const name of Object.keys(SECRETS)) assert.equal(env[name], undefined, `${name} leaked to the MCP server`);
    assert.deepEqual(Object.values(env).filter((value) => Object.values(SECRETS).includes(value)), []);
    assert.equal(env.PATH, process.env.PATH);
  });

  it("summarizes images", async () => {
    const result = await provider.call("get-tiny-image", {}, {});
    assert.match(result.content, /\[image: image\/png, \d+ bytes\]/);
    assert.ok(result.content.length < 500);
  });

  it("times out a long-running tool after timeout_ms (retryable) and keeps the server usable", async () => {
    const started = Date.now();
    const result = await provider.call("trigger-long-running-operation", { duration: 10, steps: 10 }, {});
    const ms = Date.now() - started;
    assert.equal(result.status, "timeout");
    assert.equal(result.retryable, true);
    assert.ok(ms >= 1900 && ms < 4000, `took ${ms} ms`);
    assert.equal((await provider.call("echo", { message: "still here" }, {})).content, "Echo: still here");
  });

  it("cancels a call mid-way through its signal, fast", async () => {
    const controller = new AbortController();
    // Some moment of a 10 s call (no outside event says it reached the server); the result must be
    // the same either way: cancelled at once.
    setTimeout(() => controller.abort(), 150);
    const started = Date.now();
    const result = await provider.call("trigger-long-running-operation", { duration: 10, steps: 10 }, { signal: controller.signal });
    const ms = Date.now() - started;
    assert.deepEqual(result, { status: "cancelled", content: "the tool call was cancelled", retryable: false });
    assert.ok(ms < 1000, `took ${ms} ms`);
  });

  it("reports a killed server once (retryable), then restarts it on the next call", async () => {
    const pid = pidOf("everything");
    process.kill(pid, "SIGKILL");
    assert.ok(await waitUntil(() => !alive(pid), 5000));
    const first = await provider.call("echo", { message: "anyone?" }, {});
    assert.equal(first.status, "error");
    assert.equal(first.retryable, true);
    assert.match(first.content, /exited unexpectedly/);
    const second = await provider.call("echo", { message: "back" }, {});
    assert.deepEqual(second, { status: "ok", content: "Echo: back", retryable: false });
    assert.notEqual(pidOf("everything"), pid);
    assert.equal(provider.status().find((s) => s.server === "everything")?.state, "ready");
  });

  it("pipes each server's stderr into our logger at debug", () => {
    const lines = records().filter((r) => r.component === "mcp" && r.stream === "stderr");
    assert.ok(lines.some((r) => r.server === "everything" && String(r.msg).includes("STDIO")));
    assert.ok(lines.some((r) => r.server === "files" && String(r.msg).includes("running on stdio")));
    assert.ok(lines.every((r) => r.level === 20));
  });

  it("close() ends every child process", async () => {
    const pids = provider.status().map((s) => s.pid);
    assert.ok(pids.every((pid) => typeof pid === "number" && alive(pid)));
    const started = Date.now();
    await provider.close();
    logger.info({ ms: Date.now() - started }, "closed");
    for (const pid of pids) assert.equal(alive(pid!), false, `pid ${pid} is gone`);
    assert.deepEqual(await childPids(), []);
    assert.ok(provider.status().every((s) => s.state === "closed" && s.pid === null));
    assert.deepEqual(await provider.call("echo", { message: "late" }, {}), { status: "error", content: "the tool provider is closed", retryable: false });
  });
});
