import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { tempConfig } from "../helpers/temp-config.js";

async function serve(extraYaml = "", env: Record<string, string> = {}): Promise<CliProcess> {
  const { dir, configPath } = await tempConfig(extraYaml);
  return new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env });
}

async function stop(proc: CliProcess): Promise<number | null> {
  proc.endInput();
  const { code } = await proc.exited;
  assert.deepEqual(protocolViolations(proc), []);
  return code;
}

describe("serve-stdio v1 (built CLI)", () => {
  it("answers ping with the exact seed frame, echoing string and numeric ids by type", async () => {
    const proc = await serve();
    proc.send({ id: "1", method: "ping", params: {} });
    proc.send({ id: 7, method: "ping" });
    await proc.response("1");
    await proc.response(7);
    assert.equal(await stop(proc), 0);
    assert.ok(proc.rawLines.includes('{"id":"1","type":"result","result":{"status":"ok"}}'), proc.stdout);
    assert.ok(proc.rawLines.includes('{"id":7,"type":"result","result":{"status":"ok"}}'), proc.stdout);
  });

  it("negotiates the protocol version in initialize", async () => {
    const proc = await serve();
    const init = await proc.request({ id: "init-1", method: "initialize", params: { protocol_versions: [1] } });
    assert.equal(init.type, "result");
    const result = init.result as { protocol_version: number; capabilities: Record<string, unknown>; server: { name: string; version: string } };
    assert.equal(result.protocol_version, 1);
    assert.equal(result.server.name, "local-ai");
    assert.match(result.server.version, /^\d+\.\d+\.\d+/);
    assert.equal(typeof result.capabilities.parallel_chat, "boolean");
    assert.equal(typeof result.capabilities.targeted_cancel, "boolean");
    assert.deepEqual(result.capabilities.methods, ["initialize", "ping", "doctor", "plan", "chat", "cancel", "warm_up", "pull", "unload", "ps", "metrics", "mcp_prompts", "mcp_resources", "tokenize", "detokenize", "shutdown"]);
    assert.equal(result.capabilities.parallel_chat, true);
    assert.equal(result.capabilities.targeted_cancel, true);
    const none = await proc.request({ id: "init-2", method: "initialize", params: { protocol_versions: [2, 3] } });
    assert.equal(none.type, "error");
    assert.equal(none.code, "invalid_request");
    assert.equal(await stop(proc), 0);
  });

  it("answers every malformed line precisely and keeps reading", async () => {
    const proc = await serve();
    const cases: Array<[string, { id: string | number | null; code: string }]> = [
      ["{not json", { id: null, code: "invalid_json" }],
      ["[1,2,3]", { id: null, code: "invalid_request" }],
      ['"ping"', { id: null, code: "invalid_request" }],
      ['{"method":"ping"}', { id: null, code: "invalid_request" }],
      ['{"id":{"x":1},"method":"ping"}', { id: null, code: "invalid_request" }],
      ['{"id":"m1"}', { id: "m1", code: "invalid_request" }],
      ['{"id":"m2","method":42}', { id: "m2", code: "invalid_request" }],
      ['{"id":5,"method":"ping","params":[1]}', { id: 5, code: "invalid_request" }],
      ['{"id":"u1","method":"no_such_method"}', { id: "u1", code: "unknown_method" }],
      ['{"id":"c1","method":"chat","params":{"input":42}}', { id: "c1", code: "invalid_request" }],
    ];
    for (const [line] of cases) proc.send(line);
    proc.send({ id: "after", method: "ping" });
    await proc.response("after");
    const errors = proc.messages.filter((m) => m.type === "error");
    assert.deepEqual(
      errors.map((m) => ({ id: m.id, code: m.code })),
      cases.map(([, expected]) => expected),
    );
    for (const error of errors) assert.equal(typeof error.message, "string");
    assert.equal(await stop(proc), 0);
  });

  it("a chat without input, or with a misspelt param, is invalid_request naming the param (with a hint)", async () => {
    const proc = await serve();
    const missing = await proc.request({ id: "n1", method: "chat", params: { session_id: "s1" } });
    assert.deepEqual([missing.type, missing.code, missing.message], ["error", "invalid_request", 'Invalid params for "chat": input: required (a non-empty string or content parts) unless resume is true or a prompt is given']);
    const empty = await proc.request({ id: "n2", method: "chat", params: { input: "" } });
    assert.equal(empty.code, "invalid_request");
    const typo = await proc.request({ id: "n3", method: "chat", params: { sesion_id: "s1", input: "hi" } });
    assert.equal(typo.code, "invalid_request");
    assert.equal(typo.message, 'Invalid params for "chat": sesion_id: unknown param (did you mean "session_id"?); accepted: user_id, session_id, agent, input, prompt, resume, approve_execution, elicitation, keep_alive');
    assert.deepEqual(typo.details, { issues: [{ param: "sesion_id", message: 'unknown param (did you mean "session_id"?); accepted: user_id, session_id, agent, input, prompt, resume, approve_execution, elicitation, keep_alive' }] });
    const far = await proc.request({ id: "n4", method: "warm_up", params: { zzzzzz: 1 } });
    assert.equal(far.message, 'Invalid params for "warm_up": zzzzzz: unknown param; accepted: agent, keep_alive');
    assert.equal(await stop(proc), 0);
  });

  it("ignores blank lines and tolerates CRLF", async () => {
    const proc = await serve();
    proc.write('\n\r\n   \n{"id":"crlf","method":"ping"}\r\n');
    const reply = await proc.response("crlf");
    assert.equal(reply.type, "result");
    assert.equal(await stop(proc), 0);
    assert.equal(proc.messages.length, 1);
  });

  it("discards an over-long line with invalid_request and serves the next line", async () => {
    const proc = await serve("stdio:\n  max_line_bytes: 4096\n");
    proc.send({ id: "big", method: "ping", params: { pad: "x".repeat(100_000) } });
    proc.send({ id: "next", method: "ping" });
    await proc.response("next");
    assert.equal(await stop(proc), 0);
    const [first, second] = proc.messages;
    assert.equal(first?.type, "error");
    assert.equal(first?.id, null);
    assert.equal(first?.code, "invalid_request");
    assert.match(String(first?.message), /4096/);
    assert.equal(second?.id, "next");
  });

  it("enforces the default 8 MiB cap without buffering the line", async () => {
    const proc = await serve();
    const huge = `{"id":"huge","method":"ping","params":{"pad":"${"y".repeat(9 * 1024 * 1024)}"}}\n`;
    proc.write(huge);
    proc.send({ id: "ok", method: "ping" });
    await proc.response("ok", 20_000);
    assert.equal(proc.messages[0]?.code, "invalid_request");
    assert.equal(await stop(proc), 0);
  });

  it("answers 100 pipelined pings, each exactly once", async () => {
    const proc = await serve();
    proc.write(Array.from({ length: 100 }, (_, i) => `{"id":${i},"method":"ping"}\n`).join(""));
    await proc.waitFor(() => proc.messages.length >= 100);
    assert.equal(await stop(proc), 0);
    const ids = proc.messages.map((m) => m.id as number).sort((a, b) => a - b);
    assert.deepEqual(ids, Array.from({ length: 100 }, (_, i) => i));
    assert.ok(proc.messages.every((m) => m.type === "result"));
  });

  it("shutdown answers, stops taking requests and exits 0", async () => {
    const proc = await serve();
    proc.write('{"id":"s","method":"shutdown"}\n{"id":"late","method":"ping"}\n');
    const { code } = await proc.exited;
    assert.equal(code, 0);
    assert.deepEqual(proc.messages, [{ id: "s", type: "result", result: { status: "ok" } }]);
  });

  it("stdin EOF flushes the answers to requests already read, then exits 0", async () => {
    // doctor can outlast the default 5 s grace on a loaded machine; this test is about the flush.
    const proc = await serve("stdio:\n  shutdown_grace_ms: 120000\n");
    proc.write('{"id":1,"method":"ping"}\n{"id":2,"method":"doctor"}\n');
    proc.endInput();
    const { code } = await proc.exited;
    assert.equal(code, 0);
    assert.deepEqual(proc.messages.map((m) => [m.id, m.type]).sort(), [[1, "result"], [2, "result"]]);
  });

  it("SIGTERM shuts down gracefully with exit 0", async () => {
    const proc = await serve();
    await proc.request({ id: 1, method: "ping" });
    proc.kill("SIGTERM");
    const { code, signal } = await proc.exited;
    assert.equal(signal, null);
    assert.equal(code, 0);
  });

  it("a missing config never kills the server: ping, initialize and doctor still answer", async () => {
    const proc = new CliProcess(["serve-stdio", "--config", "/nonexistent/local-ai/config.yaml"]);
    assert.equal((await proc.request({ id: 1, method: "ping" })).type, "result");
    assert.equal((await proc.request({ id: 2, method: "initialize" })).type, "result");
    const doctor = await proc.request({ id: 3, method: "doctor" }, 20_000);
    assert.equal(doctor.type, "result");
    const report = doctor.result as { ok: boolean; checks: Array<{ id: string; status: string; fix?: string }> };
    assert.equal(report.ok, false);
    const config = report.checks.find((check) => check.id === "config");
    assert.equal(config?.status, "fail");
    assert.ok(config?.fix);
    assert.equal(await stop(proc), 0);
  });

  it("an invalid config never kills the server either", async () => {
    const proc = await serve("  max_steps: zero\n");
    assert.equal((await proc.request({ id: 1, method: "ping" })).type, "result");
    const doctor = await proc.request({ id: 2, method: "doctor" }, 20_000);
    const report = doctor.result as { checks: Array<{ id: string; status: string; finding: string }> };
    const config = report.checks.find((check) => check.id === "config");
    assert.equal(config?.status, "fail");
    assert.match(config?.finding ?? "", /max_steps/);
    assert.equal(await stop(proc), 0);
  });

  it("keeps stdout pure protocol while logging at debug level", async () => {
    const proc = await serve("", { LOCAL_AI_LOG_LEVEL: "debug" });
    proc.send("garbage");
    await proc.request({ id: "i", method: "initialize", params: { protocol_versions: [1], client: { name: "test" } } });
    await proc.request({ id: "d", method: "doctor" }, 20_000);
    await proc.request({ id: "p", method: "ping" });
    proc.send({ id: "x", method: "nope" });
    await proc.response("x");
    assert.equal(await stop(proc), 0);
    assert.match(proc.stderr, /"level":20/, "debug logs went to stderr");
    assert.equal(proc.messages.length, 5);
  });
});
