import assert from "node:assert/strict";
import { once } from "node:events";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { LocalAiClient, LocalAiError, resolveCliPath, type ChatEvent, type ExitInfo, type LogRecord, type LocalAiClientOptions, type PullProgress, type RestartInfo } from "../../src/client/index.js";
import { restartDelay, restartPolicy } from "../../src/client/restart-policy.js";
import { pullEvents, pullResult, unloadResult } from "../../src/protocol/methods/result-schemas.js";
import { rejection } from "../helpers/local-ai-rejection.js";

const SCRIPT = fileURLToPath(new URL("../helpers/scripted-local-ai.js", import.meta.url));

/** The client on the scripted stand-in (no model): the client's own logic, exactly. */
function scripted(options: LocalAiClientOptions = {}, env: Record<string, string> = {}): { client: LocalAiClient; lines: Array<["send" | "receive", string]> } {
  const lines: Array<["send" | "receive", string]> = [];
  const client = new LocalAiClient({ command: process.execPath, args: [SCRIPT], env, trace: (direction, line) => lines.push([direction, line]), ...options });
  return { client, lines };
}

describe("LocalAiClient (scripted child)", () => {
  it("starts with initialize, answers calls, and reports the child's stderr as lines and log records", async () => {
    const { client } = scripted();
    const stderr: string[] = [];
    const logs: LogRecord[] = [];
    client.on("stderr", (line) => stderr.push(line));
    client.on("log", (record) => logs.push(record));
    const init = await client.start();
    assert.equal(init.server.version, "0.0.0-scripted");
    assert.deepEqual(await client.ping(), { status: "ok" });
    assert.deepEqual(logs.map((record) => [record.level, record.msg]), [["info", "scripted local-ai ready"]]);
    assert.deepEqual(stderr.slice(1), ["a line that is not JSON"]);
    await client.close();
  });

  it("pull: progress events to onProgress, then the result; the wire is exactly the pull wire", async () => {
    const { client, lines } = scripted();
    const progress: PullProgress[] = [];
    const result = await client.pull("hf:org/model", { onProgress: (p) => progress.push(p) });
    assert.deepEqual(result, { path: "/models/hf:org/model.gguf", bytes: 456 });
    assert.deepEqual(progress, [
      { downloaded_bytes: 0, total_bytes: 456 },
      { downloaded_bytes: 123, total_bytes: 456 },
      { downloaded_bytes: 456, total_bytes: 456 },
    ]);
    const sent = lines.filter(([direction]) => direction === "send").map(([, line]) => JSON.parse(line) as { id: string; method: string; params: unknown });
    const pull = sent.find((message) => message.method === "pull");
    assert.deepEqual(pull?.params, { ref: "hf:org/model", force: false });
    // What the stand-in wrote is what the schema the server's pull will be checked against says.
    for (const [, line] of lines.filter(([direction, text]) => direction === "receive" && text.includes(`"id":"${pull?.id}"`))) {
      const { id: _id, type, ...rest } = JSON.parse(line) as Record<string, unknown>;
      if (type === "event") assert.ok(pullEvents.safeParse(rest).success, line);
      else assert.ok(pullResult.safeParse(rest.result).success, line);
    }
    await client.close();
  });

  it("pull: aborting sends cancel {request_id} and rejects with cancelled", async () => {
    const { client, lines } = scripted();
    const controller = new AbortController();
    const pending = client.pull("slow", { signal: controller.signal, force: true, onProgress: (p) => p.downloaded_bytes === 123 && controller.abort() });
    const error = await rejection(pending);
    assert.equal(error.code, "cancelled");
    // The cancel went out before the ping, so the ping's answer comes after the server saw it.
    await client.ping();
    const sent = lines.filter(([direction]) => direction === "send").map(([, line]) => JSON.parse(line) as { id: string; method: string; params: Record<string, unknown> });
    const pull = sent.find((message) => message.method === "pull");
    assert.deepEqual(pull?.params, { ref: "slow", force: true });
    assert.deepEqual(sent.find((message) => message.method === "cancel")?.params, { request_id: pull?.id });
    const cancelAnswer = lines.find(([direction, line]) => direction === "receive" && line.includes('"result":{"status":"ok"}') && line.includes(`"id":"${sent.find((m) => m.method === "cancel")?.id}"`));
    assert.ok(cancelAnswer, "local-ai accepted the cancel");
    await client.close();
  });

  it("unload: all models or one", async () => {
    const { client } = scripted();
    const all = await client.unload();
    assert.deepEqual(all, { unloaded: ["default", "tiny"] });
    assert.ok(unloadResult.safeParse(all).success);
    assert.deepEqual(await client.unload({ model: "tiny" }), { unloaded: ["tiny"] });
    await client.close();
  });

  it("an error frame is a LocalAiError with the wire's code, message and details", async () => {
    const { client } = scripted();
    const error = await rejection(client.request("nope"));
    assert.equal(error.code, "unknown_method");
    assert.equal(error.message, 'Unknown method "nope"');
    await client.close();
  });

  it("a failed initialize rejects start() with its code and does not restart", async () => {
    const { client } = scripted({}, { SCRIPTED_INIT: "fail" });
    const error = await rejection(client.start());
    assert.equal(error.code, "invalid_request");
    assert.deepEqual(error.details, { supported: [2] });
    await client.close();
  });

  it("a child that cannot start rejects start() with process_exited, its exit code and stderr", async () => {
    const { client } = scripted({}, { SCRIPTED_EXIT_AT_START: "1" });
    const exits: ExitInfo[] = [];
    client.on("exit", (info) => exits.push(info));
    const error = await rejection(client.start());
    assert.equal(error.code, "process_exited");
    assert.equal(error.details?.exit_code, 2);
    assert.deepEqual(error.details?.stderr_tail, ["cannot start: scripted"]);
    assert.equal(exits[0]?.restart_in_ms, null, "a first start that fails is not retried");
    await client.close();
  });

  it("a command that does not exist rejects with spawn_failed", async () => {
    const client = new LocalAiClient({ command: path.join(path.dirname(SCRIPT), "no-such-program"), args: [] });
    const error = await rejection(client.ping());
    assert.equal(error.code, "spawn_failed");
    assert.match(String(error.details?.spawn_error), /ENOENT/);
    await client.close();
  });

  it("a crash fails the calls in flight at once with process_exited, then restarts with backoff; the next call works", async () => {
    const { client } = scripted({ restart: { initialDelayMs: 10 } });
    await client.start();
    const pid = client.pid;
    const exit = once(client, "exit") as Promise<[ExitInfo]>;
    const restarted = once(client, "restart");
    const waiting = client.chat({ input: "wait" });
    const error = await rejection(client.request("crash"));
    assert.equal(error.code, "process_exited");
    assert.equal(error.details?.exit_code, 3);
    assert.deepEqual((error.details?.stderr_tail as string[]).at(-1), "boom");
    assert.equal((await rejection(waiting.result)).code, "process_exited");
    const [info] = await exit;
    assert.equal(info.expected, false);
    assert.equal(info.restart_in_ms, 10);
    assert.deepEqual(await client.ping(), { status: "ok" }, "a call during the restart waits for it");
    const [restart] = (await restarted) as [RestartInfo];
    assert.equal(restart.attempt, 1);
    assert.notEqual(restart.pid, pid);
    await client.close();
  });

  it("restart: false leaves it stopped: calls reject with the exit until start() is called again", async () => {
    const { client } = scripted({ restart: false });
    await client.start();
    assert.equal((await rejection(client.request("crash"))).code, "process_exited");
    const again = await rejection(client.ping());
    assert.equal(again.code, "process_exited");
    assert.equal(again.details?.exit_code, 3);
    await client.start();
    assert.deepEqual(await client.ping(), { status: "ok" });
    await client.close();
  });

  it("gives up after maxRestarts consecutive crashes", async () => {
    const { client } = scripted({ restart: { maxRestarts: 2, initialDelayMs: 1 } });
    const exits: ExitInfo[] = [];
    client.on("exit", (info) => exits.push(info));
    for (let i = 0; i < 3; i++) assert.equal((await rejection(client.request("crash"))).code, "process_exited");
    assert.deepEqual(exits.map((info) => info.restart_in_ms), [1, 2, null]);
    assert.equal((await rejection(client.ping())).code, "process_exited");
    await client.close();
  });

  it("chat: a turn iterates its events; aborting rejects with cancelled, sends cancel, and delivers nothing after", async () => {
    const { client, lines } = scripted();
    const controller = new AbortController();
    const turn = client.chat({ input: "wait" }, { signal: controller.signal });
    const seen: ChatEvent[] = [];
    let thrown: unknown;
    try {
      for await (const event of turn) {
        seen.push(event);
        if (event.event === "llm_chunk") controller.abort();
      }
    } catch (error) {
      thrown = error;
    }
    assert.ok(thrown instanceof LocalAiError && thrown.code === "cancelled");
    assert.equal((await rejection(turn.result)).code, "cancelled");
    assert.deepEqual(seen.map((event) => event.event), ["run_start", "llm_start", "llm_chunk"]);
    await client.ping();
    const cancel = lines.map(([, line]) => JSON.parse(line) as { method?: string; params?: unknown }).find((message) => message.method === "cancel");
    assert.deepEqual(cancel?.params, { request_id: turn.id });
    await client.close();
  });

  it("chat: a host that does not consume keeps a bounded buffer; text deltas are merged, never lost", async () => {
    const { client } = scripted({ maxBufferedEvents: 10 });
    const turn = client.chat({ input: "flood:5000" });
    const result = await turn.result;
    const events: ChatEvent[] = [];
    for await (const event of turn) events.push(event);
    assert.ok(events.length <= 10, `${events.length} events kept`);
    const text = events.flatMap((event) => (event.event === "llm_chunk" ? [event.delta] : [])).join("");
    assert.equal(text, result.response, "every delta's text is there");
    assert.equal(turn.droppedEvents, 2, "llm_done and final did not fit and cannot merge");
    await client.close();
  });

  it("close() on a client never started, and twice, is fine; calls after it reject with client_closed", async () => {
    const { client } = scripted();
    await client.close();
    await client.close();
    assert.equal((await rejection(client.ping())).code, "client_closed");
  });
});

describe("client helpers", () => {
  it("runs the unpacked CLI inside an asar archive when it exists", () => {
    const packed = path.join(path.sep, "app", "resources", "app.asar", "node_modules", "local-ai-core", "dist", "src", "cli", "main.js");
    const unpacked = packed.replace(`${path.sep}app.asar${path.sep}`, `${path.sep}app.asar.unpacked${path.sep}`);
    assert.equal(resolveCliPath(packed, (file) => file === unpacked), unpacked);
    assert.equal(resolveCliPath(packed, () => false), packed);
    const plain = path.join(path.sep, "srv", "node_modules", "local-ai-core", "dist", "src", "cli", "main.js");
    assert.equal(resolveCliPath(plain, () => true), plain);
  });

  it("backoff doubles from the initial delay up to the cap; bad numbers are refused", () => {
    const policy = restartPolicy({ initialDelayMs: 100, maxDelayMs: 1000 });
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((attempt) => restartDelay(policy!, attempt)), [100, 200, 400, 800, 1000, 1000]);
    assert.equal(restartPolicy(false), null);
    assert.throws(() => restartPolicy({ maxRestarts: -1 }), /restart\.maxRestarts must be a number >= 0/);
  });
});
