// `mcp` tools in POST /v1/responses: the built CLI's serve-http connects to a real Streamable HTTP
// MCP server (the SDK's McpServer + StreamableHTTPServerTransport on 127.0.0.1), lists and calls
// its tools inside the turn, and pauses for approval as `mcp_approval_request` items answered by
// an `mcp_approval_response`; what the model does is scripted (openai engine, scripted upstream).
// Driven by the official `openai` client; every event is checked against its pinned types.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { configYaml, openaiModel } from "../helpers/config-yaml.js";
import { freePort, startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { startDiceMcpServer, type DiceMcpServer } from "../helpers/mcp-dice-server.js";
import { startAgentUpstream, toolResultSent, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { assertEventShape, assertResponseShape, loadResponsesTypes } from "../helpers/responses-types.js";

let enabled: HttpServer;
let disabled: HttpServer;
let upstream: AgentUpstream;
let mcp: DiceMcpServer;
const types = loadResponsesTypes();
const clientOf = (server: HttpServer): OpenAI => new OpenAI({ baseURL: `${server.base}/v1`, apiKey: "x", maxRetries: 0, timeout: 60_000 });

before(async () => {
  [upstream, mcp] = await Promise.all([startAgentUpstream(), startDiceMcpServer()]);
  const config = (allow: boolean): string =>
    configYaml({ llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } }, agents: { assistant: { temperature: 0 } }, http: { allow_request_mcp: allow, request_mcp_allowed_hosts: ["127.0.0.1"] } });
  [enabled, disabled] = await Promise.all([startHttpServer(config(true)), startHttpServer(config(false))]);
});

after(async () => {
  await Promise.allSettled([enabled?.stop(), disabled?.stop()]);
  await Promise.allSettled([upstream?.close(), mcp?.close()]);
});

type Json = Record<string, unknown>;
const diceTool = (settings: Json = {}): OpenAI.Responses.Tool => ({ type: "mcp", server_label: "dice", server_url: mcp.url, ...settings });
const offeredTools = (n: number): string[] => ((upstream.chats()[n]?.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((tool) => tool.function.name);

async function streamEvents(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>): Promise<Json[]> {
  const events: Json[] = [];
  for await (const event of stream) {
    assertEventShape(types, event as unknown as Json);
    events.push(event as unknown as Json);
  }
  return events;
}

describe("mcp tools in the Responses API", () => {
  it("require_approval never: the tools are listed (allowed_tools only), the call runs on the MCP server, its output reaches the model", async () => {
    upstream.push({ call: { id: "call_add", name: "add", arguments: { a: 2, b: 3 } } }, { text: ["The sum is 5."] });
    const chats = upstream.chats().length;
    const seen = mcp.requests.length;
    const response = await clientOf(enabled).responses.create({
      model: "assistant",
      input: "add 2 and 3",
      tools: [diceTool({ require_approval: "never", allowed_tools: ["add"], headers: { "X-Dice-Key": "k1" } })],
    });
    assertResponseShape(types, response);
    assert.equal(response.status, "completed");
    assert.deepEqual(response.output.map((item) => item.type), ["mcp_list_tools", "mcp_call", "message"]);
    const [list, call] = response.output as [OpenAI.Responses.ResponseOutputItem.McpListTools, OpenAI.Responses.ResponseOutputItem.McpCall];
    assert.equal(list.server_label, "dice");
    assert.deepEqual(list.tools.map((tool) => [tool.name, tool.description]), [["add", "Adds two numbers"]]);
    assert.equal(list.error, undefined);
    assert.deepEqual(
      { server_label: call.server_label, name: call.name, arguments: JSON.parse(call.arguments), output: call.output, error: call.error, status: call.status, approval_request_id: call.approval_request_id },
      { server_label: "dice", name: "add", arguments: { a: 2, b: 3 }, output: "5", error: null, status: "completed", approval_request_id: null },
    );
    assert.equal(response.output_text, "The sum is 5.");
    assert.deepEqual((response as unknown as { local_ai: { warnings: string[] } }).local_ai.warnings, []);
    // Credentials are sent to the MCP server, never echoed (nor stored).
    assert.deepEqual((response.tools[0] as OpenAI.Responses.Tool.Mcp).headers, { "X-Dice-Key": "<redacted>" });
    assert.deepEqual(mcp.calls.at(-1), { name: "add", args: { a: 2, b: 3 } });
    assert.deepEqual(offeredTools(chats), ["add"]);
    assert.equal(toolResultSent(upstream, "call_add"), "5");
    // The request's headers went to the MCP server on every request of the session.
    const sent = mcp.requests.slice(seen);
    assert.ok(sent.some((request) => request.rpc === "tools/call"));
    assert.ok(sent.every((request) => request.headers["x-dice-key"] === "k1"));
  });

  it("require_approval always (streamed): the turn ends with mcp_approval_request and runs nothing; the approval runs the call and the turn goes on", async () => {
    upstream.push({ call: { id: "call_roll", name: "roll_dice", arguments: { sides: 6 } } });
    const calls = mcp.calls.length;
    const tools = [diceTool({ require_approval: "always" })];
    const client = clientOf(enabled);
    const first = await streamEvents(await client.responses.create({ model: "assistant", input: "roll a d6", tools, stream: true }));
    assert.deepEqual(first.map((event) => event.type), [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.mcp_list_tools.in_progress",
      "response.mcp_list_tools.completed",
      "response.output_item.done",
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
    ]);
    const listed = first[5]?.item as Json;
    assert.deepEqual((listed.tools as Json[]).map((tool) => tool.name), ["roll_dice", "add"]);
    const request = first[7]?.item as Json;
    assert.deepEqual({ ...request, id: undefined }, { type: "mcp_approval_request", id: undefined, server_label: "dice", name: "roll_dice", arguments: JSON.stringify({ sides: 6 }) });
    const firstResponse = first.at(-1)?.response as OpenAI.Responses.Response;
    assert.deepEqual(firstResponse.output.map((item) => item.type), ["mcp_list_tools", "mcp_approval_request"]);
    assert.equal(mcp.calls.length, calls, "nothing runs before the approval");

    upstream.push({ text: ["You rolled a 5."] });
    const second = await streamEvents(
      await client.responses.create({ model: "assistant", previous_response_id: firstResponse.id, input: [{ type: "mcp_approval_response", approval_request_id: String(request.id), approve: true }], tools, stream: true }),
    );
    const types2 = second.map((event) => event.type);
    const callStart = types2.indexOf("response.mcp_call.in_progress");
    assert.deepEqual(types2.slice(callStart - 1, callStart + 5), [
      "response.output_item.added",
      "response.mcp_call.in_progress",
      "response.mcp_call_arguments.delta",
      "response.mcp_call_arguments.done",
      "response.mcp_call.completed",
      "response.output_item.done",
    ]);
    const done = second[callStart + 4]?.item as Json;
    assert.deepEqual(
      [done.type, done.name, done.arguments, done.output, done.status, done.approval_request_id],
      ["mcp_call", "roll_dice", JSON.stringify({ sides: 6 }), "rolled 5 on a d6", "completed", request.id],
    );
    assert.deepEqual(mcp.calls.slice(calls), [{ name: "roll_dice", args: { sides: 6 } }]);
    const secondResponse = second.at(-1)?.response as OpenAI.Responses.Response;
    assert.equal(secondResponse.output_text, "You rolled a 5.");
    assert.equal(toolResultSent(upstream, "call_roll"), "rolled 5 on a d6");
  });

  it("a declined approval runs nothing and tells the model; a continuation without the answer is a 400 naming input", async () => {
    upstream.push({ call: { id: "call_no", name: "roll_dice", arguments: { sides: 20 } } });
    const calls = mcp.calls.length;
    const tools = [diceTool({ require_approval: { never: { tool_names: ["add"] } } })];
    const client = clientOf(enabled);
    const first = await client.responses.create({ model: "assistant", input: "roll a d20", tools });
    const request = first.output.find((item) => item.type === "mcp_approval_request");
    assert.ok(request !== undefined);
    const unanswered = await client.responses.create({ model: "assistant", previous_response_id: first.id, input: "go on", tools }).then(
      () => assert.fail("a paused response continued without its approval"),
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    );
    assert.deepEqual([unanswered.status, unanswered.param], [400, "input"]);
    assert.match(unanswered.message, new RegExp(`mcp_approval_response.*${request.id}`));

    upstream.push({ text: ["Not rolled."] });
    const second = await client.responses.create({ model: "assistant", previous_response_id: first.id, input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: false }], tools });
    assert.deepEqual(second.output.map((item) => item.type), ["mcp_list_tools", "message"]);
    assert.equal(second.output_text, "Not rolled.");
    assert.equal(mcp.calls.length, calls);
    assert.match(String(toolResultSent(upstream, "call_no")), /declined to run roll_dice/);
  });

  it("a server that cannot be reached: its list item carries the error (mcp_list_tools.failed) and the turn goes on without its tools", async () => {
    upstream.push({ text: ["No dice."] });
    const chats = upstream.chats().length;
    const gone = `http://127.0.0.1:${await freePort()}/mcp`;
    const events = await streamEvents(
      await clientOf(enabled).responses.create({ model: "assistant", input: "roll", tools: [diceTool({ server_label: "gone", server_url: gone, require_approval: "never" })], stream: true }),
    );
    assert.deepEqual(events.slice(2, 6).map((event) => event.type), ["response.output_item.added", "response.mcp_list_tools.in_progress", "response.mcp_list_tools.failed", "response.output_item.done"]);
    const list = events[5]?.item as Json;
    assert.deepEqual([list.type, list.server_label, list.tools], ["mcp_list_tools", "gone", []]);
    assert.equal(list.error, 'server "gone" failed to start: connection refused');
    assert.equal((events.at(-1)?.response as OpenAI.Responses.Response).output_text, "No dice.");
    assert.deepEqual(offeredTools(chats), []);
  });

  it("http.allow_request_mcp false: a 400 naming tools[i] and the config key, and no connection is made", async () => {
    const seen = mcp.requests.length;
    const error = await clientOf(disabled)
      .responses.create({ model: "assistant", input: "hi", tools: [{ type: "function", name: "f", parameters: {}, strict: false }, diceTool({ require_approval: "never" })] })
      .then(
        () => assert.fail("an mcp tool was accepted with http.allow_request_mcp off"),
        (caught: unknown) => caught as InstanceType<typeof OpenAI.APIError>,
      );
    assert.deepEqual([error.status, error.code, error.param], [400, "invalid_request", "tools[1]"]);
    assert.match(error.message, /http\.allow_request_mcp: true/);
    assert.equal(mcp.requests.length, seen, "the MCP server was contacted");
  });
});
