// `mcp` tools that name internal services (security issue 33, point 3), through the built CLI's
// serve-http: a server's error body or JSON-RPC message never comes back (JSON, SSE, the log at
// info), no GET fallback is tried, and loopback addresses in any spelling are refused unless
// http.request_mcp_allowed_hosts lists them. Every "internal" server here is on 127.0.0.1.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { configYaml, openaiModel } from "../helpers/config-yaml.js";
import { freePort, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { INTERNAL_SECRET, startInternalServer, type InternalServer } from "../helpers/internal-http-server.js";
import { startDiceMcpServer, type DiceMcpServer } from "../helpers/mcp-dice-server.js";
import { startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { parseSse, postResponses } from "../helpers/responses-sse.js";

let listed: HttpServer;
let unlisted: HttpServer;
let upstream: AgentUpstream;
let internal: InternalServer;
let dice: DiceMcpServer;

before(async () => {
  [upstream, internal, dice] = await Promise.all([startAgentUpstream(), startInternalServer(), startDiceMcpServer()]);
  const config = (allowedHosts: string[]): string =>
    configYaml({ llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } }, agents: { assistant: { temperature: 0 } }, http: { allow_request_mcp: true, request_mcp_allowed_hosts: allowedHosts } });
  // The log at info: what an operator's log shows must not carry the internal bodies either.
  [listed, unlisted] = await Promise.all([startHttpServer(config(["127.0.0.1", "localhost", "[::1]"]), [], { LOCAL_AI_LOG_LEVEL: "info" }), startHttpServer(config([]))]);
});

after(async () => {
  await Promise.allSettled([listed?.stop(), unlisted?.stop()]);
  await Promise.allSettled([upstream?.close(), internal?.close(), dice?.close()]);
});

type Json = Record<string, unknown>;
const mcpTool = (label: string, url: string): Json => ({ type: "mcp", server_label: label, server_url: url, require_approval: "never" });

/** One turn, non-streamed and streamed: the JSON body and the SSE text, whole. */
async function bothWays(server: HttpServer, tools: Json[], steps: () => void): Promise<{ json: string; sse: string }> {
  steps();
  const json = await (await postResponses(server.base, { model: "assistant", input: "go", tools })).text();
  steps();
  const sse = await (await postResponses(server.base, { model: "assistant", input: "go", tools, stream: true })).text();
  return { json, sse };
}

/** The `mcp_list_tools` errors by server label, of a JSON response body. */
function listErrors(body: string): Record<string, unknown> {
  const output = (JSON.parse(body) as { output: Json[] }).output;
  return Object.fromEntries(output.filter((item) => item.type === "mcp_list_tools").map((item): [string, unknown] => [String(item.server_label), item.error]));
}

/** The same, from the `response.completed` event of an SSE body. */
function streamedListErrors(text: string): Record<string, unknown> {
  const completed = parseSse(text).find((event) => event.data.type === "response.completed");
  assert.ok(completed !== undefined, `no response.completed in ${text.slice(0, 500)}`);
  return listErrors(JSON.stringify(completed.data.response));
}

const REFUSAL = "an MCP server a request names may not be on a loopback, link-local or private address unless http.request_mcp_allowed_hosts lists its host";

describe("mcp tools naming internal services", () => {
  it("error bodies and JSON-RPC messages are reported in our words (JSON, SSE, log at info), and no GET fallback is tried", async () => {
    const tools = [
      mcpTool("html", internal.url("/html-500")),
      mcpTool("rpc", internal.url("/rpc-error")),
      mcpTool("get", internal.url("/post-404")),
      mcpTool("json", internal.url("/not-jsonrpc")),
    ];
    const { json, sse } = await bothWays(listed, tools, () => upstream.push({ text: ["ok"] }));
    const expected = {
      html: 'server "html" failed to start: the server answered HTTP 500 (a server error)',
      rpc: 'server "rpc" failed to start: the server answered JSON-RPC error -32603',
      get: 'server "get" failed to start: the server answered HTTP 404: not a Streamable HTTP MCP server',
      json: 'server "json" failed to start: not an MCP server (its answer does not follow the MCP protocol)',
    };
    assert.deepEqual(listErrors(json), expected);
    assert.deepEqual(streamedListErrors(sse), expected);
    assert.ok(!json.includes(INTERNAL_SECRET), `the JSON response carries the internal body: ${json}`);
    assert.ok(!sse.includes(INTERNAL_SECRET), `the SSE stream carries the internal body: ${sse}`);
    // The failures are logged at info and above, in the same words.
    assert.match(listed.proc.stderr, /the server answered HTTP 500 \(a server error\)/);
    assert.ok(!listed.proc.stderr.includes(INTERNAL_SECRET), `the log carries the internal body: ${listed.proc.stderr}`);
    const failing = new Set(["/html-500", "/rpc-error", "/post-404", "/not-jsonrpc"]);
    const reached = internal.requests.filter((request) => failing.has(request.path));
    assert.equal(reached.length, 8, "each server got its initialize, once per turn");
    assert.deepEqual(reached.filter((request) => request.method !== "POST"), [], "a GET (the HTTP+SSE fallback) reached an internal server");
  });

  it("a tools/call answered with a JSON-RPC error: the mcp_call and the model get its code, not its message", async () => {
    const { json, sse } = await bothWays(listed, [mcpTool("peek", internal.url("/call-error"))], () => upstream.push({ call: { id: "call_peek", name: "peek", arguments: {} } }, { text: ["done"] }));
    for (const body of [json, JSON.stringify(parseSse(sse).find((event) => event.data.type === "response.completed")?.data.response)]) {
      const call = (JSON.parse(body) as { output: Json[] }).output.find((item) => item.type === "mcp_call");
      assert.deepEqual([call?.status, call?.error], ["failed", "the server answered JSON-RPC error -32603"]);
    }
    assert.ok(!json.includes(INTERNAL_SECRET) && !sse.includes(INTERNAL_SECRET), "a response carries the internal message");
    assert.equal(toolResultSent(upstream, "call_peek")?.includes(INTERNAL_SECRET), false);
    assert.ok(!listed.proc.stderr.includes(INTERNAL_SECRET), "the log carries the internal message");
  });

  it("loopback in any spelling is refused before anything connects unless listed (exact wording)", async () => {
    const port = internal.port;
    const seen = internal.requests.length;
    const tools = [
      mcpTool("v4", `http://127.0.0.1:${port}/html-500`),
      mcpTool("hex", `http://0x7f000001:${port}/html-500`),
      mcpTool("v6", `http://[::1]:${port}/html-500`),
      mcpTool("mapped", `http://[::ffff:127.0.0.1]:${port}/html-500`),
      mcpTool("name", `http://localhost:${port}/html-500`),
    ];
    const { json, sse } = await bothWays(unlisted, tools, () => upstream.push({ text: ["ok"] }));
    for (const errors of [listErrors(json), streamedListErrors(sse)]) {
      const { name, ...literal } = errors;
      assert.deepEqual(literal, {
        v4: `server "v4" failed to start: 127.0.0.1 is a loopback address; ${REFUSAL}`,
        hex: `server "hex" failed to start: 127.0.0.1 is a loopback address; ${REFUSAL}`,
        v6: `server "v6" failed to start: [::1] is a loopback address; ${REFUSAL}`,
        mapped: `server "mapped" failed to start: [::ffff:7f00:1] is a loopback address; ${REFUSAL}`,
      });
      assert.match(String(name), new RegExp(`^server "name" failed to start: localhost resolves to (127\\.0\\.0\\.1|::1), a loopback address; ${REFUSAL.replace(/\./g, "\\.")}$`));
    }
    assert.equal(internal.requests.length, seen, "a refused server was contacted");
  });

  it("listed hosts are accepted: 127.0.0.1 in any spelling, localhost, [::1]", async () => {
    const port = new URL(dice.url).port;
    const gone = await freePort();
    const tools = [mcpTool("hex", `http://0x7f000001:${port}/mcp`), mcpTool("name", `http://localhost:${port}/mcp`), mcpTool("v6", `http://[::1]:${gone}/mcp`)];
    upstream.push({ text: ["ok"] });
    const body = await (await postResponses(listed.base, { model: "assistant", input: "go", tools })).text();
    const output = (JSON.parse(body) as { output: Json[] }).output.filter((item) => item.type === "mcp_list_tools");
    assert.deepEqual(
      output.slice(0, 2).map((item) => [item.server_label, item.error, (item.tools as Json[]).map((tool) => tool.name)]),
      [
        ["hex", undefined, ["roll_dice", "add"]],
        ["name", undefined, ["roll_dice", "add"]],
      ],
    );
    // [::1] is let through: the connection is tried (and finds no server on that port).
    assert.match(String(output[2]?.error), /^server "v6" failed to start: (connection refused|the connection failed|network unreachable)/);
  });
});
