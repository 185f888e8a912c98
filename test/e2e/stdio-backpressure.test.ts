import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { tempConfig } from "../helpers/temp-config.js";

describe("serve-stdio under a bad reader (built CLI)", () => {
  it("a stalled reader loses no result: everything arrives once it reads again", async () => {
    const { dir, configPath } = await tempConfig("stdio:\n  writer_queue_size: 64\n");
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    proc.child.stdout.pause();
    const total = 3000;
    const pad = "p".repeat(200);
    // Ids sized so the answers overflow the pipe buffer many times over.
    proc.write(Array.from({ length: total }, (_, i) => `{"id":"${pad}-${i}","method":"ping"}\n`).join(""));
    // The stall itself (a reader that reads nothing for 2 s), not a synchronization.
    await sleep(2000);
    assert.equal(proc.messages.length, 0, "nothing can be read while the reader is stalled");
    proc.child.stdout.resume();
    await proc.waitFor(() => proc.messages.length >= total, 30_000);
    proc.endInput();
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
    const ids = new Set(proc.messages.map((m) => m.id));
    assert.equal(ids.size, total);
    assert.ok(proc.messages.every((m) => m.type === "result"));
  });

  it("JSON-RPC: a stalled reader loses no response and no batch array", async () => {
    const { dir, configPath } = await tempConfig("stdio:\n  writer_queue_size: 64\n");
    const proc = new CliProcess(["serve-stdio", "--protocol", "jsonrpc", "--config", configPath], { cwd: dir });
    proc.child.stdout.pause();
    const pad = "p".repeat(200);
    const singles = Array.from({ length: 2000 }, (_, i) => `{"jsonrpc":"2.0","id":"${pad}-${i}","method":"ping"}\n`);
    const batches = Array.from({ length: 100 }, (_, b) => `${JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: `b${b}-${i}`, method: "ping" })))}\n`);
    proc.write([...singles, ...batches].join(""));
    // The stall itself (a reader that reads nothing for 2 s), not a synchronization.
    await sleep(2000);
    assert.equal(proc.messages.length, 0, "nothing can be read while the reader is stalled");
    proc.child.stdout.resume();
    await proc.waitFor(() => proc.messages.length >= 2100, 30_000);
    proc.endInput();
    assert.equal((await proc.exited).code, 0);
    const flat = proc.messages.flatMap((m) => (Array.isArray(m) ? (m as unknown[]) : [m])) as Array<Record<string, unknown>>;
    assert.equal(flat.length, 3000);
    assert.equal(new Set(flat.map((m) => m.id)).size, 3000);
    assert.ok(flat.every((m) => m.jsonrpc === "2.0" && (m.result as { status?: string } | undefined)?.status === "ok"));
    assert.equal(proc.messages.filter((m) => Array.isArray(m)).length, 100);
  });

  it("a closed stdout is logged once and the server keeps serving until shutdown", async () => {
    const { dir, configPath } = await tempConfig();
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "error" } });
    proc.child.stdout.destroy();
    for (let i = 0; i < 50; i++) proc.send({ id: i, method: "ping" });
    // Pings answered into a closed stdout meanwhile (nothing observable: stdout is gone and the
    // log is at error level); whether they were or not, what follows must hold.
    await sleep(300);
    proc.send({ id: "d", method: "doctor" });
    proc.send({ id: "bye", method: "shutdown" });
    const { code } = await proc.exited;
    assert.equal(code, 0, proc.stderr);
    const failures = proc.stderr.split("\n").filter((line) => line.includes("ERROR_STACKTRACE"));
    assert.equal(failures.length, 1, proc.stderr);
    assert.match(failures[0] ?? "", /EPIPE/);
  });
});
