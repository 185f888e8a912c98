// serve-stdio --protocol acp, line by line as raw bytes: what the protocol answers to a malformed
// message, an unknown method, an unknown session, bad params and an over-long line, with the
// process serving on after each, and nothing but JSON-RPC on stdout.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CliProcess } from "../helpers/cli-process.js";
import { openaiModelYaml } from "../helpers/openai-agent-upstream.js";
import { closedPort } from "../helpers/openai-sse-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

type Json = Record<string, unknown>;

const errorOf = (message: Json): { code: number; message: string; data?: Json } => message.error as { code: number; message: string; data?: Json };

describe("ACP: bad input gets the JSON-RPC error the protocol expects, and the process keeps serving", () => {
  it("answers -32700, -32600, -32601, -32602 and -32002 exactly, reads on after an over-long line, and exits 0 at EOF", async () => {
    // No upstream is needed: nothing here reaches a model.
    const { dir, configPath } = await tempConfig(`stdio:\n  max_line_bytes: 4096\n${openaiModelYaml(`http://127.0.0.1:${await closedPort()}/v1`)}`);
    const proc = new CliProcess(["serve-stdio", "--protocol", "acp", "--config", configPath], { cwd: dir });
    const answer = async (line: string, id: unknown): Promise<Json> => {
      const before = proc.messages.length;
      proc.send(line);
      return (await proc.waitFor((m) => proc.messages.indexOf(m) >= before && (m as Json).id === id && ("result" in m || "error" in m)));
    };

    // Before initialize nothing else is served (the SDK's gate), and initialize itself works.
    assert.equal(errorOf(await answer('{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}', 1)).code, -32600);
    const init = await answer('{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}', 2);
    assert.equal((init.result as Json).protocolVersion, 1);

    // A line that is not JSON: -32700 with id null, and the next line is served.
    const parse = await answer("{this is not json", null);
    assert.deepEqual(parse, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    // Valid JSON that is not a request: -32600 with id null (a batch too: ACP has none).
    assert.equal(errorOf(await answer("[1,2]", null)).code, -32600);
    assert.equal(errorOf(await answer('"a string"', null)).code, -32600);
    // An unknown method: -32601 naming it.
    const unknown = await answer('{"jsonrpc":"2.0","id":3,"method":"session/teleport","params":{}}', 3);
    assert.equal(errorOf(unknown).code, -32601);
    assert.deepEqual(errorOf(unknown).data, { method: "session/teleport" });
    // An unknown session: -32002 (resource not found) with the session id in data.
    const missing = await answer('{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"0123456789abcdef","prompt":[{"type":"text","text":"hi"}]}}', 4);
    assert.deepEqual(errorOf(missing), { code: -32002, message: "Resource not found", data: { sessionId: "0123456789abcdef" } });
    // Params that do not match the schema, or a relative cwd: -32602.
    assert.equal(errorOf(await answer('{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/tmp"}}', 5)).code, -32602);
    const relative = errorOf(await answer('{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"some/dir","mcpServers":[]}}', 6));
    assert.equal(relative.code, -32602);
    assert.match(relative.message, /cwd must be an absolute path/);
    assert.equal(relative.data?.code, "invalid_params");
    // A line over stdio.max_line_bytes: discarded unread and answered -32600 with id null.
    const long = await answer(`{"jsonrpc":"2.0","id":7,"method":"session/list","params":{"pad":"${"x".repeat(5000)}"}}`, null);
    assert.equal(errorOf(long).code, -32600);
    assert.match(errorOf(long).message, /over the limit of 4096 \(stdio\.max_line_bytes\)/);
    assert.equal(proc.messages.some((m) => (m as Json).id === 7), false, "the discarded request is not run");

    // Still serving, and a notification for an unknown session is not answered at all.
    proc.send('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}');
    const list = await answer('{"jsonrpc":"2.0","id":8,"method":"session/list","params":{}}', 8);
    assert.deepEqual(list.result, { sessions: [] });

    proc.endInput();
    assert.equal((await proc.exited).code, 0);
    // The stdout firewall: every line one JSON-RPC 2.0 message, logs only on stderr.
    assert.ok(proc.stdout.endsWith("\n"));
    for (const line of proc.rawLines) assert.equal((JSON.parse(line) as Json).jsonrpc, "2.0", line);
    assert.equal(proc.rawLines.length, 11, "one answer per request or bad line, nothing else");
  });
});
