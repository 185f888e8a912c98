import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { needsApproval, serverRequiresApproval } from "../../src/tools/approval-policy.js";

describe("serverRequiresApproval", () => {
  it("true covers every tool, false none", () => {
    assert.equal(serverRequiresApproval(true, "read_file"), true);
    assert.equal(serverRequiresApproval(false, "write_file"), false);
  });

  it("a list covers the remote tool names it names", () => {
    assert.equal(serverRequiresApproval(["write_file"], "write_file"), true);
    assert.equal(serverRequiresApproval(["write_file"], "read_file"), false);
    assert.equal(serverRequiresApproval([], "write_file"), false);
  });
});

describe("needsApproval", () => {
  it("a flagged tool needs approval unless execution was approved", () => {
    assert.equal(needsApproval({ requiresApproval: true }, false), true);
    assert.equal(needsApproval({ requiresApproval: true }, true), false);
  });

  it("an unflagged tool never needs approval", () => {
    assert.equal(needsApproval({ requiresApproval: false }, false), false);
    assert.equal(needsApproval({ requiresApproval: false }, true), false);
  });
});
