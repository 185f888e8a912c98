import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { globToRegExp } from "../../src/shared/glob-pattern.js";
import { matchTools } from "../../src/tools/tool-glob.js";
import type { ToolDescriptor } from "../../src/tools/tool-types.js";

function tool(name: string, server: string, remoteName = name): ToolDescriptor {
  return { name, server, remoteName, inputSchema: { type: "object" }, requiresApproval: false };
}

const TOOLS = [
  tool("echo", "everything"),
  tool("get-sum", "everything"),
  tool("read_file", "files"),
  tool("write_file", "files"),
  tool("files2_read_file", "files2", "read_file"),
];

const names = (patterns: string[]): string[] => matchTools(TOOLS, patterns).tools.map((t) => t.name);

describe("globToRegExp", () => {
  it("supports * and ? and escapes everything else", () => {
    assert.ok(globToRegExp("read_*").test("read_file"));
    assert.ok(globToRegExp("get-su?").test("get-sum"));
    assert.ok(!globToRegExp("get-su?").test("get-sums"));
    assert.ok(!globToRegExp("a.b").test("axb"));
    assert.ok(globToRegExp("a+(b)").test("a+(b)"));
  });
});

describe("matchTools", () => {
  it("* selects every tool, in provider order", () => {
    assert.deepEqual(names(["*"]), TOOLS.map((t) => t.name));
  });

  it("matches exact names and globs against the exposed name", () => {
    assert.deepEqual(names(["echo"]), ["echo"]);
    assert.deepEqual(names(["*_file"]), ["read_file", "write_file", "files2_read_file"]);
    assert.deepEqual(names(["get-su?"]), ["get-sum"]);
  });

  it("server-scoped patterns select by server, the tool part by remote or exposed name", () => {
    assert.deepEqual(names(["files/*"]), ["read_file", "write_file"]);
    assert.deepEqual(names(["files2/read_file"]), ["files2_read_file"]);
    assert.deepEqual(names(["files*/read_*"]), ["read_file", "files2_read_file"]);
    assert.deepEqual(names(["*/echo"]), ["echo"]);
  });

  it("lists each tool once even when several patterns match it", () => {
    assert.deepEqual(names(["echo", "e*", "everything/*"]), ["echo", "get-sum"]);
  });

  it("reports patterns that matched nothing", () => {
    const result = matchTools(TOOLS, ["ech", "echo", "nope/*"]);
    assert.deepEqual(result.unmatched, ["ech", "nope/*"]);
    assert.deepEqual(matchTools(TOOLS, []).tools, []);
  });
});
