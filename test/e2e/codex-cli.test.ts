// The real Codex CLI (@openai/codex, pinned in scripts/codex.version) against the built CLI's
// serve-http over the Responses API: `codex exec` inside a network namespace that has only the
// loopback interface, with serve-http (and the scripted upstream) in the same namespace. Codex
// speaks nothing but `POST /v1/responses`; these are the two things a user does with it. The
// namespace is `unshare --net` (test/helpers/loopback-netns.ts); client-process.ts refuses to
// start Codex anywhere else.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { CODEX_MISSING_MESSAGE, findCodexBinary, pinnedCodexVersion } from "../helpers/codex-binary.js";
import { runCodexScenario, UPSTREAM_URL_PLACEHOLDER, type CodexScenarioReport } from "../helpers/codex-scenario.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";
import { parseSse } from "../helpers/http-server.js";
import { loopbackNetnsUnavailable, NETNS_UNAVAILABLE_MESSAGE } from "../helpers/loopback-netns.js";
import type { Exchange } from "../helpers/recording-proxy.js";

const codexBinary = findCodexBinary();
if (codexBinary === null) process.stderr.write(CODEX_MISSING_MESSAGE);
const netnsProblem = codexBinary === null ? null : loopbackNetnsUnavailable();
if (netnsProblem !== null) process.stderr.write(NETNS_UNAVAILABLE_MESSAGE(netnsProblem));
const skip =
  codexBinary === null ? "Codex CLI not installed: npm run install:codex" : netnsProblem !== null ? `no loopback-only network namespace: ${netnsProblem}` : false;

/** The agent: named in Codex's `model` (text turn), or reached through http.model_aliases from a Codex model name (tool turn). */
const AGENT = "coder";
const TOKEN = "codex-test-token";
/**
 * A model name Codex 0.169.0 has no metadata for, so it sends its plain function tools. (With no
 * `model` it sends its default, gpt-6.1-sol, whose catalog entry switches to an `additional_tools`
 * input item and a freeform `custom` exec tool: see docs/clients.md.)
 */
const CODEX_MODEL = "gpt-5-codex";

interface ResponseEvent {
  type: string;
  sequence_number: number;
  delta?: string;
  item?: { type: string; id?: string; call_id?: string; name?: string; arguments?: string; content?: Array<{ type: string; text?: string }> };
  response?: { status: string; model?: string; usage?: { input_tokens: number } };
}

/** The Responses stream the server sent, as Codex received it. */
function eventsOf(exchange: Exchange): ResponseEvent[] {
  return parseSse(exchange.responseBody).map((frame) => {
    const event = JSON.parse(frame.data) as ResponseEvent;
    assert.equal(frame.event, event.type, "each SSE frame is named after its event type");
    return event;
  });
}

function requestOf(exchange: Exchange): { model: string; input: Array<Record<string, unknown>>; tools: Array<{ type: string; name?: string }>; stream: boolean } {
  assert.equal(`${exchange.method} ${exchange.url}`, "POST /v1/responses");
  assert.equal(exchange.requestHeaders.authorization, `Bearer ${TOKEN}`);
  return JSON.parse(exchange.requestBody) as ReturnType<typeof requestOf>;
}

function assertCodexSucceeded(report: CodexScenarioReport): void {
  assert.deepEqual(report.interfaces, ["lo"], "Codex ran in a namespace with loopback only");
  assert.equal(report.codex.code, 0, `codex exec failed:\n${report.codex.stderr.slice(-4000)}\nserver:\n${report.serverStderr.slice(-2000)}`);
  for (const exchange of report.exchanges) assert.equal(exchange.status, 200, `${exchange.url}: ${exchange.responseBody.slice(0, 500)}`);
}

describe(`Codex CLI ${pinnedCodexVersion() ?? "?"} (codex exec) against serve-http /v1/responses, loopback-only namespace`, { skip }, () => {
  it("a text turn on the embedded engine: Codex prints exactly the text the server streamed and exits 0", async () => {
    // The demo model answers DEMO_SENTENCE to any prompt; its context holds Codex's whole request
    // (~17k characters of instructions and ~18k of tool schemas: ~36k of its byte-level tokens).
    const model = await ensureFixture("demo", { contextLength: 65536 });
    const report = await runCodexScenario({
      codexBinary: codexBinary ?? "",
      serverYaml: configYaml({ llama: { models: { default: localModel(model, { ctx_size: 49152 }) } }, agents: { [AGENT]: { temperature: 0 } } }),
      bearerToken: TOKEN,
      model: AGENT,
      prompt: "Say hello.",
    });
    assertCodexSucceeded(report);
    assert.equal(report.exchanges.length, 1, "one request, no retry");
    const [exchange] = report.exchanges as [Exchange];
    const request = requestOf(exchange);
    assert.equal(request.stream, true);
    assert.ok(request.tools.some((tool) => tool.type === "namespace") && request.tools.some((tool) => tool.type === "web_search"), "Codex's own tool set, unmodified");

    const events = eventsOf(exchange);
    assert.equal(events.at(-1)?.type, "response.completed");
    const streamed = events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta).join("");
    const done = events.find((event) => event.type === "response.output_item.done" && event.item?.type === "message");
    const doneText = done?.item?.content?.map((part) => part.text ?? "").join("");
    assert.equal(streamed, DEMO_SENTENCE, "the model's greedy answer");
    assert.equal(doneText, streamed);
    assert.ok((events.at(-1)?.response?.usage?.input_tokens ?? 0) > 30_000, "the whole request was the prompt");

    assert.equal(report.codex.lastMessage, streamed, "Codex's final message is the streamed text");
    assert.equal(report.codex.stdout, `${streamed}\n`, "and exactly that is what codex exec prints on stdout");
  });

  it("a tool round trip through the openai engine: Codex runs the scripted exec_command and its output reaches the upstream", async () => {
    const command = "echo hi";
    const report = await runCodexScenario({
      codexBinary: codexBinary ?? "",
      serverYaml: configYaml({
        llama: { models: { default: { ...openaiModel(UPSTREAM_URL_PLACEHOLDER, "test-model"), ctx_size: 131072 } } },
        agents: { [AGENT]: { temperature: 0 } },
        // Codex keeps a model name of its own; the glob maps it to the agent.
        http: { model_aliases: { "gpt-5*": AGENT } },
      }),
      bearerToken: TOKEN,
      model: CODEX_MODEL,
      prompt: `Run \`${command}\`.`,
      upstreamSteps: [{ call: { id: "call_up_1", name: "exec_command", arguments: { cmd: command } } }, { text: ["The command ", "printed hi."] }],
    });
    assertCodexSucceeded(report);
    assert.equal(report.exchanges.length, 2, "one request for the call, one with its output");
    const [first, second] = report.exchanges as [Exchange, Exchange];
    assert.equal(requestOf(first).model, CODEX_MODEL);
    assert.equal(eventsOf(first).at(-1)?.response?.model, CODEX_MODEL, "the answer echoes the name Codex sent");

    // 1. The server turned the upstream's tool call into a function_call item and ended the response.
    const callItem = eventsOf(first).find((event) => event.type === "response.output_item.done")?.item;
    assert.equal(callItem?.type, "function_call");
    assert.equal(callItem?.name, "exec_command");
    assert.deepEqual(JSON.parse(callItem?.arguments ?? "null"), { cmd: command });
    assert.equal(eventsOf(first).at(-1)?.type, "response.completed");

    // 2. Codex ran it and resent the conversation with the call and its output.
    const input = requestOf(second).input;
    const call = input.find((item) => item["type"] === "function_call");
    const output = input.find((item) => item["type"] === "function_call_output");
    assert.equal(call?.["call_id"], callItem?.call_id);
    assert.equal(output?.["call_id"], callItem?.call_id);
    const commandOutput = String(output?.["output"]);
    assert.match(commandOutput, /Process exited with code 0[\s\S]*Output:\nhi\n$/, "Codex really ran the command");

    // 3. The upstream saw the call and then exactly that output as a tool message.
    assert.equal(report.upstreamChats.length, 2);
    const upstreamTools = (report.upstreamChats[0] as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
    assert.ok(upstreamTools.some((tool) => tool.function.name === "exec_command"), "Codex's function tools were offered upstream");
    const messages = (report.upstreamChats[1] as { messages: Array<{ role: string; content?: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> }> }).messages;
    const assistant = messages.find((message) => message.tool_calls !== undefined);
    const toolMessage = messages.find((message) => message.role === "tool");
    assert.equal(assistant?.tool_calls?.[0]?.function.name, "exec_command");
    assert.deepEqual(JSON.parse(assistant?.tool_calls?.[0]?.function.arguments ?? "null"), { cmd: command });
    assert.equal(toolMessage?.tool_call_id, assistant?.tool_calls?.[0]?.id);
    assert.equal(toolMessage?.content, commandOutput);

    // 4. The scripted final text is what Codex prints.
    assert.equal(report.codex.lastMessage, "The command printed hi.");
    assert.equal(report.codex.stdout, "The command printed hi.\n");
  });

  it("Codex unmodified (no model in its config): its default model name reaches an agent through a glob, its additional_tools item is read", async () => {
    const report = await runCodexScenario({
      codexBinary: codexBinary ?? "",
      serverYaml: configYaml({
        llama: { models: { default: { ...openaiModel(UPSTREAM_URL_PLACEHOLDER, "test-model"), ctx_size: 131072 } } },
        agents: { [AGENT]: { temperature: 0 } },
        http: { model_aliases: { "gpt-*": AGENT } },
      }),
      bearerToken: TOKEN,
      prompt: "say hi",
      upstreamSteps: [{ text: ["Hi from ", "the default model."] }],
    });
    assertCodexSucceeded(report);
    assert.equal(report.exchanges.length, 1);
    const request = requestOf(report.exchanges[0] as Exchange);
    assert.match(request.model, /^gpt-/, "Codex sent its own default model name");
    assert.ok(request.input.some((item) => item["type"] === "additional_tools"), "its tools came as an additional_tools input item");
    const offered = ((report.upstreamChats[0] as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((tool) => tool.function.name);
    assert.ok(offered.length > 0, "the functions of that item were offered upstream");
    assert.equal(eventsOf(report.exchanges[0] as Exchange).at(-1)?.type, "response.completed");
    assert.equal(report.codex.stdout, "Hi from the default model.\n");
  });
});
