import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { parseConfigText } from "../../src/config/load-config.js";
import { loadMcpConfig, mcpConfigError, mergeMcpConfig, parseMcpConfigText } from "../../src/config/mcp-config.js";

const BASE = "/srv/app";

function ok(text: string, env: Record<string, string> = {}) {
  const result = parseMcpConfigText(text, env, BASE);
  assert.ok(result.ok, `expected ok, got ${JSON.stringify(result)}`);
  return result;
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
    assert.equal(result.servers.other?.cwd, "/srv/app");
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
      remote: { type: "http", url: "https://example.com/mcp" },
      sse: { url: "https://example.com/sse" },
    },
    globalShortcut: "Ctrl+Space",
  });

  it("keeps stdio servers, ignores unknown keys, skips disabled and non-stdio servers", () => {
    const result = ok(json, { TOKEN: "t0k" });
    assert.deepEqual(Object.keys(result.servers), ["files"]);
    assert.deepEqual(result.servers.files, {
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "."],
      env: { TOKEN: "t0k" },
      cwd: BASE,
      requires_approval: [],
      timeout_ms: 60_000,
    });
    assert.deepEqual(
      result.skipped.map((s) => s.server),
      ["off", "remote", "sse"],
    );
    assert.equal(result.skipped[0]!.reason, "disabled");
    assert.match(result.skipped[1]!.reason, /not a stdio server/);
  });

  it("reports an unset variable of an enabled server with its key path", () => {
    const found = problems(json);
    assert.deepEqual(found.map((p) => p.path), ["mcpServers.files.env.TOKEN"]);
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
    assert.equal(result.servers.a?.command, "x");
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
    assert.equal(result.servers.a?.cwd, path.join(dir, "sub"));
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
    assert.equal(merged.mcp.servers.a?.command, "replaced");
    assert.equal(parsed.config.mcp.servers.a?.command, "one", "the input config is not mutated");
  });
});
