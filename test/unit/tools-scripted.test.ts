import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ToolProvider } from "../../src/tools/tool-types.js";
import { ScriptedToolProvider } from "../helpers/mcp-scripted-tools.js";

describe("ScriptedToolProvider", () => {
  const make = (): ScriptedToolProvider =>
    new ScriptedToolProvider([
      { name: "echo", replies: (args) => ({ content: String(args.text) }) },
      { name: "flaky", replies: [{ status: "error", content: "down", retryable: true }, { content: "up" }] },
      { name: "slow", replies: { delayMs: 5_000, content: "late" }, timeoutMs: 30 },
      { name: "write_file", server: "files", requiresApproval: true },
      { name: "broken", replies: { throws: new Error("provider bug") } },
    ]);

  it("implements ToolProvider with the real glob matching", async () => {
    const provider: ToolProvider = make();
    await Promise.all([provider.start(), provider.start()]);
    assert.deepEqual(provider.list(["e*", "files/*"]).map((t) => t.name), ["echo", "write_file"]);
    assert.equal(provider.list(["write_file"])[0]?.requiresApproval, true);
  });

  it("answers from scripts, in sequence, and records every call", async () => {
    const provider = make();
    assert.deepEqual(await provider.call("echo", { text: "hi" }, {}), { status: "ok", content: "hi", retryable: false });
    assert.deepEqual(await provider.call("flaky", {}, {}), { status: "error", content: "down", retryable: true });
    assert.equal((await provider.call("flaky", {}, {})).content, "up");
    assert.equal((await provider.call("flaky", {}, {})).content, "up");
    assert.equal(provider.callsTo("flaky").length, 3);
    assert.equal((await provider.call("nope", {}, {})).status, "error");
    await assert.rejects(provider.call("broken", {}, {}), /provider bug/);
  });

  it("simulates timeouts and honours cancellation", async () => {
    const provider = make();
    const timedOut = await provider.call("slow", {}, {});
    assert.equal(timedOut.status, "timeout");
    assert.equal(timedOut.retryable, true);
    const controller = new AbortController();
    const pending = provider.call("echo", { text: "x" }, { signal: controller.signal });
    const slow = new ScriptedToolProvider([{ name: "slow", replies: { delayMs: 5_000 } }]);
    const cancelled = slow.call("slow", {}, { signal: AbortSignal.timeout(20) });
    assert.equal((await cancelled).status, "cancelled");
    assert.equal((await pending).status, "ok");
    await provider.close();
    assert.equal((await provider.call("echo", { text: "x" }, {})).status, "error");
  });
});
