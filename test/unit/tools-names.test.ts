import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assignToolNames, sanitizeToolName, TOOL_NAME_PATTERN } from "../../src/tools/tool-names.js";

describe("sanitizeToolName", () => {
  it("keeps valid names and replaces other characters with _", () => {
    assert.equal(sanitizeToolName("read_file"), "read_file");
    assert.equal(sanitizeToolName("get-sum"), "get-sum");
    assert.equal(sanitizeToolName("get.weather"), "get_weather");
    assert.equal(sanitizeToolName("files/read file"), "files_read_file");
    assert.equal(sanitizeToolName("héllo"), "h_llo");
  });

  it("cuts to 64 characters and never returns an empty name", () => {
    const long = sanitizeToolName("a".repeat(100));
    assert.equal(long.length, 64);
    assert.equal(sanitizeToolName(""), "tool");
    for (const name of ["a".repeat(100), "", "x.y/z", "ok"]) assert.match(sanitizeToolName(name), TOOL_NAME_PATTERN);
  });
});

describe("assignToolNames", () => {
  it("gives the bare name to the first server in config order, <server>_<tool> to later ones", () => {
    const names = assignToolNames([
      { server: "everything", remoteName: "echo" },
      { server: "files", remoteName: "read_file" },
      { server: "fixture", remoteName: "echo" },
      { server: "other", remoteName: "echo" },
    ]);
    assert.deepEqual(names, ["echo", "read_file", "fixture_echo", "other_echo"]);
  });

  it("adds _2, _3 when the scoped name is taken too", () => {
    const names = assignToolNames([
      { server: "a", remoteName: "x" },
      { server: "b", remoteName: "b_x" }, // takes the name b's own clash would want
      { server: "b", remoteName: "x" },
      { server: "b", remoteName: "x" }, // a server listing a name twice
    ]);
    assert.deepEqual(names, ["x", "b_x", "b_x_2", "b_x_3"]);
  });

  it("treats names that clash only after sanitizing as a clash", () => {
    assert.deepEqual(
      assignToolNames([
        { server: "s", remoteName: "get.weather" },
        { server: "s", remoteName: "get_weather" },
      ]),
      ["get_weather", "s_get_weather"],
    );
  });

  it("keeps suffixed names within 64 characters and unique", () => {
    const remoteName = "t".repeat(80);
    const names = assignToolNames([
      { server: "a", remoteName },
      { server: "b", remoteName },
      { server: "b", remoteName },
      { server: "b", remoteName },
    ]);
    assert.equal(new Set(names).size, 4);
    for (const name of names) assert.match(name, TOOL_NAME_PATTERN);
    assert.ok(names[2]!.endsWith("_2") && names[3]!.endsWith("_3"));
  });

  it("is deterministic: same input, same names", () => {
    const input = [
      { server: "a", remoteName: "x" },
      { server: "b", remoteName: "x" },
    ];
    assert.deepEqual(assignToolNames(input), assignToolNames(input));
  });
});
