import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { parseConfigText } from "../../src/config/load-config.js";
import { loadMcpConfig, mcpConfigError, mergeMcpConfig, parseMcpConfigText } from "../../src/config/mcp-config.js";
import { isRemoteServer } from "../../src/config/mcp-server-kind.js";
import type { McpRemoteServerConfig, McpServerConfig, McpServerEntry } from "../../src/config/schema.js";

const BASE = "/srv/app";

function ok(text: string, env: Record<string, string> = {}) {
  const result = parseMcpConfigText(text, env, BASE);
  assert.ok(result.ok, `expected ok, got ${JSON.stringify(result)}`);
  return result;
}

function stdio(entry: McpServerEntry | undefined): McpServerConfig {
  assert.ok(entry !== undefined && !isRemoteServer(entry), `expected a stdio server, got ${JSON.stringify(entry)}`);
  return entry;
}

function remote(entry: McpServerEntry | undefined): McpRemoteServerConfig {
  assert.ok(entry !== undefined && isRemoteServer(entry), `expected a remote server, got ${JSON.stringify(entry)}`);
  return entry;
}

function problems(text: string, env: Record<string, string> = {}) {
  const result = parseMcpConfigText(text, env, BASE);
  assert.ok(!result.ok, "expected problems");
  return result.problems;
}

describe("parseMcpConfigText: our shape", () => {
  it("reads {servers} YAML with defaults, ${ENV} and cwd resolved against the file's folder", () => {
    const result = ok(
      "servers:\n  files:\n    command: npx\n    args: [-y, server, '${ROOT}']\n    cwd: ./work\n    requires_approval: [write_file]\n  other:\n    command: node\n",
      { ROOT: "/data" },
    );
    assert.deepEqual(result.servers.files, {
      command: "npx",
      args: ["-y", "server", "/data"],
      env: {},
      cwd: "/srv/app/work",
      requires_approval: ["write_file"],
      timeout_ms: 60_000,
    });
    assert.equal(stdio(result.servers.other).cwd, "/srv/app");
    assert.deepEqual(Object.keys(result.servers), ["files", "other"]);
  });

  it("reads {mcp: {servers}} and ignores the other sections of a whole config.yaml", () => {
    const result = ok("app:\n  log_level: debug\nmcp:\n  servers:\n    a:\n      command: x\n      timeout_ms: 500\n");
    assert.equal(result.servers.a?.timeout_ms, 500);
  });

  it("reports misspelt keys and wrong types with key paths and lines", () => {
    const found = problems("servers:\n  files:\n    comand: npx\n    args: oops\n");
    assert.deepEqual(
      found.map((p) => [p.path, p.line]),
      [
        ["servers.files.command", 2],
        ["servers.files.comand", 3],
        ["servers.files.args", 4],
      ],
    );
    assert.match(found[0]!.message, /is required/);
    assert.equal(found[2]!.found, '"oops"');
    assert.deepEqual(
      problems("mcp:\n  servers: {}\nextra: 1\n").map((p) => p.path),
      ["extra"],
    );
  });
});

describe("parseMcpConfigText: the common mcpServers JSON shape", () => {
  const json = JSON.stringify({
    mcpServers: {
      files: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."], env: { TOKEN: "${TOKEN}" }, autoApprove: ["x"] },
      off: { command: "node", disabled: true, env: { K: "${NOT_SET}" } },
      remote: { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer ${TOKEN}" }, alwaysAllow: ["x"] },
      sse: { type: "sse", url: "https://example.com/sse" },
      cursor: { url: "https://example.com/cursor" },
      windsurf: { serverUrl: "https://example.com/windsurf", type: "streamable-http" },
      socket: { type: "ws", url: "wss://example.com/ws" },
    },
    globalShortcut: "Ctrl+Space",
  });

  it("keeps stdio and remote servers, ignores unknown keys, skips disabled servers and transports we do not speak", () => {
    const result = ok(json, { TOKEN: "t0k" });
    assert.deepEqual(Object.keys(result.servers), ["files", "remote", "sse", "cursor", "windsurf"]);
    assert.deepEqual(result.servers.files, {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "."],
      env: { TOKEN: "t0k" },
      cwd: BASE,
      requires_approval: [],
      timeout_ms: 60_000,
    });
    assert.deepEqual(result.servers.remote, {
      url: "https://example.com/mcp",
      transport: "http",
      headers: { Authorization: "Bearer t0k" },
      requires_approval: [],
      timeout_ms: 60_000,
      oauth: null,
    });
    assert.equal(remote(result.servers.sse).transport, "sse");
    // No type: Streamable HTTP (with the SSE fallback), as Cursor and LM Studio mean it.
    assert.equal(remote(result.servers.cursor).transport, "http");
    assert.equal(remote(result.servers.windsurf).url, "https://example.com/windsurf");
    assert.deepEqual(
      result.skipped.map((s) => [s.server, s.reason]),
      [
        ["off", "disabled"],
        ["socket", 'transport "ws" is not supported (stdio, http and sse are)'],
      ],
    );
  });

  it("reports a remote server's bad url and headers at their key paths", () => {
    const found = problems('{"mcpServers": {"r": {"url": "ftp://x/mcp", "headers": {"A": 1}}}}');
    assert.deepEqual(found.map((p) => p.path), ["mcpServers.r.url", "mcpServers.r.headers.A"]);
  });

  it("reports an unset variable of an enabled server with its key path", () => {
    const found = problems(json);
    assert.deepEqual(found.map((p) => p.path), ["mcpServers.files.env.TOKEN", "mcpServers.remote.headers.Authorization"]);
    assert.match(found[0]!.message, /TOKEN is not set/);
  });

  it("accepts our keys (requires_approval, timeout_ms) and validates them", () => {
    const result = ok('{"mcpServers": {"a": {"command": "x", "requires_approval": true, "timeout_ms": 100}}}');
    assert.equal(result.servers.a?.requires_approval, true);
    const found = problems('{"mcpServers": {"a": {"args": [1]}, "b": {"command": "y", "timeout_ms": -1}}}');
    assert.deepEqual(found.map((p) => p.path), ["mcpServers.a.command", "mcpServers.a.args.0", "mcpServers.b.timeout_ms"]);
    assert.ok(found.every((p) => p.line === 1));
  });

  it("reads JSON indented with tabs (not valid YAML)", () => {
    const result = ok('{\n\t"mcpServers": {\n\t\t"a": {\n\t\t\t"command": "x"\n\t\t}\n\t}\n}\n');
    assert.equal(stdio(result.servers.a).command, "x");
  });
});

describe("parseMcpConfigText: errors", () => {
  it("reports syntax errors with a line", () => {
    const [problem] = problems('{"mcpServers": {"a": }');
    assert.match(problem!.message, /^syntax/);
    assert.equal(typeof problem!.line, "number");
  });

  it("reports a file without servers", () => {
    assert.match(problems("foo: 1\n")[0]!.message, /no MCP servers found/);
    assert.match(problems("[]\n")[0]!.message, /expected an object/);
    assert.equal(problems('{"mcpServers": []}')[0]!.path, "mcpServers");
  });
});

describe("loadMcpConfig", () => {
  it("loads a file and resolves cwd against its folder", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "local-ai-mcp-config-"));
    const file = path.join(dir, "mcp.json");
    await writeFile(file, JSON.stringify({ mcpServers: { a: { command: "node", cwd: "sub" } } }));
    const result = await loadMcpConfig(file, {});
    assert.ok(result.ok);
    assert.equal(result.path, file);
    assert.equal(stdio(result.servers.a).cwd, path.join(dir, "sub"));
  });

  it("reports a missing file as a problem, and mcpConfigError lists the problems", async () => {
    const result = await loadMcpConfig("/nonexistent/mcp.yaml", {});
    assert.ok(!result.ok);
    assert.match(result.problems[0]!.message, /cannot read the file/);
    const error = mcpConfigError(result);
    assert.equal(error.code, "config_invalid");
    assert.match(error.message, /mcp\.yaml: cannot read the file/);
  });
});

describe("mergeMcpConfig", () => {
  it("adds the file's servers; a name in both takes the file's definition in the config's position", () => {
    const parsed = parseConfigText("mcp:\n  servers:\n    a:\n      command: one\n    b:\n      command: two\n", {}, BASE);
    assert.ok(parsed.ok);
    const extra = ok("servers:\n  c:\n    command: three\n  a:\n    command: replaced\n").servers;
    const merged = mergeMcpConfig(parsed.config, extra);
    assert.deepEqual(Object.keys(merged.mcp.servers), ["a", "b", "c"]);
    assert.equal(stdio(merged.mcp.servers.a).command, "replaced");
    assert.equal(stdio(parsed.config.mcp.servers.a).command, "one", "the input config is not mutated");
  });
});

describe("mcp.servers in config.yaml: remote servers", () => {
  it("takes url with transport or type, headers with ${ENV}, timeout_ms and oauth (its secret file resolved)", () => {
    const parsed = parseConfigText(
      "mcp:\n  servers:\n    gh:\n      url: https://api.example.com/mcp\n      headers:\n        Authorization: Bearer ${GH_TOKEN}\n      timeout_ms: 5000\n    old:\n      url: http://127.0.0.1:3001/sse\n      type: sse\n    auth:\n      url: https://mcp.example.com/\n      transport: http\n      oauth:\n        client_id: abc\n        client_secret_file: ./secret.txt\n",
      { GH_TOKEN: "ghp_x" },
      BASE,
    );
    assert.ok(parsed.ok, JSON.stringify(parsed));
    assert.deepEqual(parsed.config.mcp.servers.gh, { url: "https://api.example.com/mcp", transport: "http", headers: { Authorization: "Bearer ghp_x" }, requires_approval: [], timeout_ms: 5000, oauth: null });
    assert.equal(remote(parsed.config.mcp.servers.old).transport, "sse");
    assert.deepEqual(remote(parsed.config.mcp.servers.auth).oauth, { client_id: "abc", client_secret_file: "/srv/app/secret.txt", scopes: [] });
  });

  it("reports a remote entry's problems at their key paths, not as one invalid union", () => {
    const parsed = parseConfigText("mcp:\n  servers:\n    r:\n      url: not a url\n      transport: websocket\n      headrs: {}\n", {}, BASE);
    assert.ok(!parsed.ok);
    assert.deepEqual(parsed.problems.map((p) => p.path), ["mcp.servers.r.url", "mcp.servers.r.transport", "mcp.servers.r.headrs"]);
    assert.match(parsed.problems[2]!.message, /did you mean "headers"/);
  });
});
