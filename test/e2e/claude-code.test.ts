// The real Claude Code (@anthropic-ai/claude-code, pinned in scripts/claude-code.version) against
// the built CLI's serve-http over the Messages API: `claude -p --output-format json` inside a
// network namespace that has only the loopback interface, with serve-http (and the scripted
// upstream) in the same namespace. Claude Code speaks nothing but `POST /v1/messages?beta=true`.
// The namespace is `unshare --net` (test/helpers/loopback-netns.ts); client-process.ts refuses to
// start Claude Code anywhere else.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { CLAUDE_CODE_MISSING_MESSAGE, findClaudeCodeBinary, pinnedClaudeCodeVersion } from "../helpers/claude-code-binary.js";
import { runClaudeCodeScenario, UPSTREAM_URL_PLACEHOLDER, type ClaudeCodeScenarioReport } from "../helpers/claude-code-scenario.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";
import { parseSse } from "../helpers/http-server.js";
import { loopbackNetnsUnavailable, NETNS_UNAVAILABLE_MESSAGE } from "../helpers/loopback-netns.js";
import type { Exchange } from "../helpers/recording-proxy.js";

const binary = findClaudeCodeBinary();
if (binary === null) process.stderr.write(CLAUDE_CODE_MISSING_MESSAGE);
const netnsProblem = binary === null ? null : loopbackNetnsUnavailable();
if (netnsProblem !== null) process.stderr.write(NETNS_UNAVAILABLE_MESSAGE(netnsProblem));
const skip = binary === null ? "Claude Code not installed: npm run install:claude-code" : netnsProblem !== null ? `no loopback-only network namespace: ${netnsProblem}` : false;

const AGENT = "coder";
const TOKEN = "claude-code-test-token";
/** Claude Code's own model names (its default claude-opus-..., the small/fast claude-haiku-...) are all served by the agent. */
const ALIASES = { model_aliases: { "claude-*": AGENT } };

interface MessagesEvent {
  type: string;
  index?: number;
  content_block?: { type: string; id?: string; name?: string; input?: unknown };
  delta?: { type: string; text?: string; partial_json?: string; stop_reason?: string };
  usage?: { input_tokens?: number; cache_read_input_tokens?: number };
}

/** The Messages stream the server sent, as Claude Code received it. */
function eventsOf(exchange: Exchange): MessagesEvent[] {
  return parseSse(exchange.responseBody).map((frame) => {
    const event = JSON.parse(frame.data) as MessagesEvent;
    assert.equal(frame.event, event.type, "each SSE frame is named after its event type");
    return event;
  });
}

interface ClaudeRequest {
  model: string;
  stream?: boolean;
  system?: Array<{ type: string; text: string }>;
  tools?: Array<{ name: string }>;
  messages: Array<{ role: string; content: string | Array<Record<string, unknown>> }>;
}

function requestOf(exchange: Exchange): ClaudeRequest {
  assert.equal(`${exchange.method} ${exchange.url}`, "POST /v1/messages?beta=true");
  return JSON.parse(exchange.requestBody) as ClaudeRequest;
}

/** The model-step requests (Claude Code may send none other, but a side request must not break the count). */
const steps = (report: ClaudeCodeScenarioReport): Exchange[] => report.exchanges.filter((exchange) => exchange.url.startsWith("/v1/messages"));

function assertSucceeded(report: ClaudeCodeScenarioReport): void {
  assert.deepEqual(report.interfaces, ["lo"], "Claude Code ran in a namespace with loopback only");
  const detail = `stdout:\n${report.claude.stdout.slice(-3000)}\nstderr:\n${report.claude.stderr.slice(-3000)}\nexchanges: ${report.exchanges.map((e) => `${e.method} ${e.url} ${e.status}`).join(", ")}\nserver:\n${report.serverStderr.slice(-2000)}`;
  assert.equal(report.claude.code, 0, `claude -p failed:\n${detail}`);
  assert.equal(report.claude.json?.is_error, false, detail);
  for (const exchange of report.exchanges) assert.equal(exchange.status, 200, `${exchange.url}: ${exchange.responseBody.slice(0, 500)}`);
}

/** A scripted Bash call and a final text: the tool round trip over the openai engine. */
async function toolRoundTrip(auth: "bearer" | "api_key", model: string | undefined): Promise<ClaudeCodeScenarioReport> {
  return runClaudeCodeScenario({
    binary: binary ?? "",
    serverYaml: configYaml({ llama: { models: { default: { ...openaiModel(UPSTREAM_URL_PLACEHOLDER, "test-model"), ctx_size: 200000 } } }, agents: { [AGENT]: { temperature: 0 } }, http: ALIASES }),
    auth: { kind: auth, token: TOKEN },
    model,
    prompt: "Run `echo hi`.",
    allowedTools: ["Bash"],
    upstreamSteps: [{ call: { id: "toolu_up_1", name: "Bash", arguments: { command: "echo hi", description: "Print hi" } } }, { text: ["The command ", "printed hi."] }],
  });
}

function assertToolRoundTrip(report: ClaudeCodeScenarioReport): void {
  assertSucceeded(report);
  assert.equal(report.claude.json?.result, "The command printed hi.", "the scripted final text is Claude Code's result");
  const exchanges = steps(report);
  assert.equal(exchanges.length, 2, `one request for the call, one with its result: ${exchanges.map((e) => e.url).join(", ")}`);
  const [first, second] = exchanges as [Exchange, Exchange];
  // 1. The upstream's call came back as a tool_use block whose input was streamed as input_json_delta.
  const events = eventsOf(first);
  const start = events.find((event) => event.type === "content_block_start" && event.content_block?.type === "tool_use");
  assert.deepEqual([start?.content_block?.name, start?.content_block?.input], ["Bash", {}]);
  const json = events.filter((event) => event.delta?.type === "input_json_delta").map((event) => event.delta?.partial_json ?? "").join("");
  assert.deepEqual(JSON.parse(json), { command: "echo hi", description: "Print hi" });
  assert.equal(events.find((event) => event.type === "message_delta")?.delta?.stop_reason, "tool_use");
  // 2. Claude Code ran it and sent its tool_result.
  const last = requestOf(second).messages.at(-1);
  const result = (Array.isArray(last?.content) ? last.content : []).find((block) => block.type === "tool_result");
  assert.equal(result?.tool_use_id, start?.content_block?.id);
  assert.equal(result?.is_error, false);
  const output = typeof result?.content === "string" ? result.content : JSON.stringify(result?.content);
  assert.match(output, /^hi\n?$/, "Claude Code really ran the command");
  // 3. The upstream got the tool result as a tool message after the call.
  assert.equal(report.upstreamChats.length, 2);
  const messages = (report.upstreamChats[1] as { messages: Array<{ role: string; content?: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { name: string } }> }> }).messages;
  const toolMessage = messages.at(-1);
  assert.deepEqual([toolMessage?.role, toolMessage?.tool_call_id], ["tool", "toolu_up_1"]);
  assert.match(String(toolMessage?.content), /^hi\n?$/);
  const upstreamTools = (report.upstreamChats[0] as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
  assert.ok(upstreamTools.some((tool) => tool.function.name === "Bash"), "Claude Code's tools were offered upstream");
}

describe(`Claude Code ${pinnedClaudeCodeVersion() ?? "?"} (claude -p) against serve-http /v1/messages, loopback-only namespace`, { skip }, () => {
  it("a text turn on the embedded engine: result is the model's text, is_error false, the whole request in the prompt", async () => {
    // The demo model answers DEMO_SENTENCE to any prompt; its context holds Claude Code's whole
    // request (~50 KB of system text, environment and tool schemas).
    const model = await ensureFixture("demo", { contextLength: 131072 });
    const report = await runClaudeCodeScenario({
      binary: binary ?? "",
      serverYaml: configYaml({ llama: { models: { default: localModel(model, { ctx_size: 98304 }) } }, agents: { [AGENT]: { temperature: 0 } }, http: ALIASES }),
      auth: { kind: "bearer", token: TOKEN },
      model: AGENT,
      prompt: "Say hello.",
    });
    assertSucceeded(report);
    assert.equal(report.claude.json?.result, DEMO_SENTENCE);
    const exchanges = steps(report);
    assert.equal(exchanges.length, 1, "one model step");
    const request = requestOf(exchanges[0]!);
    assert.equal(request.stream, true);
    assert.equal(request.model, AGENT);
    assert.ok((request.tools ?? []).some((tool) => tool.name === "Bash"), "Claude Code's own tool set, unmodified");
    const events = eventsOf(exchanges[0]!);
    assert.deepEqual([events[0]?.type, events.at(-1)?.type], ["message_start", "message_stop"]);
    const usage = events.find((event) => event.type === "message_delta")?.usage;
    assert.ok((usage?.input_tokens ?? 0) + (usage?.cache_read_input_tokens ?? 0) > 20_000, `the whole request was the prompt: ${JSON.stringify(usage)}`);
  });

  it("a Bash tool round trip over the openai engine (ANTHROPIC_AUTH_TOKEN: Authorization: Bearer)", async () => {
    const report = await toolRoundTrip("bearer", AGENT);
    assertToolRoundTrip(report);
    assert.equal(steps(report)[0]?.requestHeaders.authorization, `Bearer ${TOKEN}`);
  });

  it("ANTHROPIC_API_KEY instead: the token arrives as x-api-key", async () => {
    const report = await toolRoundTrip("api_key", AGENT);
    assertToolRoundTrip(report);
    assert.equal(steps(report)[0]?.requestHeaders["x-api-key"], TOKEN);
  });

  it("without ANTHROPIC_MODEL: Claude Code's default model name is served through http.model_aliases", async () => {
    const report = await toolRoundTrip("bearer", undefined);
    assertToolRoundTrip(report);
    const model = requestOf(steps(report)[0]!).model;
    assert.match(model, /^claude-/, "Claude Code's own default model name");
  });
});
