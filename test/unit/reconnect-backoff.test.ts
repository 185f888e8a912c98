import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReconnectBackoff } from "../../src/tools/mcp/reconnect-backoff.js";

describe("ReconnectBackoff", () => {
  it("lets the first attempt go at once, then doubles from 250 ms after each failure, capped at 10 s, and resets on success", () => {
    let now = 1_000_000;
    const backoff = new ReconnectBackoff(() => now);
    assert.equal(backoff.remainingMs(), 0);
    backoff.failed();
    assert.equal(backoff.remainingMs(), 250);
    now += 100;
    assert.equal(backoff.remainingMs(), 150, "counted from the last failure");
    backoff.failed();
    assert.equal(backoff.remainingMs(), 500);
    for (let i = 0; i < 10; i++) backoff.failed();
    assert.equal(backoff.remainingMs(), 10_000);
    now += 10_000;
    assert.equal(backoff.remainingMs(), 0);
    backoff.succeeded();
    backoff.failed();
    assert.equal(backoff.remainingMs(), 250);
  });
});
