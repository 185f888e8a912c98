// The OpenAI Agents SDK (@openai/agents) against serve-http's Responses API: OpenAIResponsesModel
// with the SDK's own `openai` client (its provider, baseURL at the built CLI), an agent with one function tool
// run to completion. The `openai` engine over a scripted upstream makes the model's tool call
// exact, so the test knows which arguments the tool must run with and what the answer is.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Agent, OpenAIProvider, OpenAIResponsesModel, run, setTracingDisabled, tool, type Model } from "@openai/agents";
import { z } from "zod";
import { configYaml, openaiModel } from "../helpers/config-yaml.js";
import { startHttpServer, type HttpServer } from "../helpers/http-cli-server.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";

// Tracing would export every run to api.openai.com; the tests talk to loopback only.
process.env["OPENAI_AGENTS_DISABLE_TRACING"] = "1";
setTracingDisabled(true);

const AGENT = "coder";
const TOKEN = "agents-sdk-token";
const INSTRUCTIONS = "You answer weather questions with the get_weather tool.";

let upstream: AgentUpstream;
let server: HttpServer;

before(async () => {
  upstream = await startAgentUpstream();
  server = await startHttpServer(configYaml({ llama: { models: { default: openaiModel(upstream.baseUrl, "test-model") } }, agents: { [AGENT]: { temperature: 0 } } }), ["--bearer-token", TOKEN]);
});

after(async () => {
  await server.stop();
  await upstream.close();
});

/**
 * The Responses model as a user gets it: the SDK's provider builds the client from its own pinned
 * `openai` (a newer 6.x than ours, so our client's type is not the one it takes).
 */
async function responsesModel(): Promise<Model> {
  const model = await new OpenAIProvider({ baseURL: `${server.base}/v1`, apiKey: TOKEN, useResponses: true }).getModel(AGENT);
  assert.ok(model instanceof OpenAIResponsesModel);
  return model;
}

/** The agent under test; `calls` records every run of its tool. */
async function weatherAgent(calls: string[]): Promise<Agent> {
  const getWeather = tool({
    name: "get_weather",
    description: "The current weather in a city.",
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      calls.push(city);
      return `Sunny, 21 C in ${city}.`;
    },
  });
  return new Agent({ name: "Weather", instructions: INSTRUCTIONS, model: await responsesModel(), tools: [getWeather] });
}

interface UpstreamMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

/** The tool round trip as the upstream saw it: the tool offered, the call, then its result as a tool message. */
function assertRoundTripUpstream(from: number, city: string): void {
  const chats = upstream.chats().slice(from);
  assert.equal(chats.length, 2, "two model steps: the call, then the answer");
  const first = chats[0]?.body as { messages: UpstreamMessage[]; tools?: Array<{ function: { name: string; parameters: unknown } }> };
  assert.deepEqual(first.tools?.map((t) => t.function.name), ["get_weather"]);
  assert.equal(first.messages[0]?.role, "system");
  assert.match(String(first.messages[0]?.content), new RegExp(INSTRUCTIONS));
  const second = (chats[1]?.body as { messages: UpstreamMessage[] }).messages;
  const assistant = second.find((message) => message.tool_calls !== undefined);
  assert.equal(assistant?.tool_calls?.[0]?.function.name, "get_weather");
  assert.deepEqual(JSON.parse(assistant?.tool_calls?.[0]?.function.arguments ?? "null"), { city });
  const result = second.at(-1);
  assert.equal(result?.role, "tool");
  assert.equal(result?.tool_call_id, assistant?.tool_calls?.[0]?.id);
  assert.equal(result?.content, `Sunny, 21 C in ${city}.`);
}

describe("OpenAI Agents SDK (OpenAIResponsesModel) against serve-http /v1/responses", () => {
  it("runs an agent with one function tool to completion (non-streamed)", async () => {
    const from = upstream.chats().length;
    upstream.push({ call: { id: "call_weather_1", name: "get_weather", arguments: { city: "Paris" } } }, { text: ["It is sunny ", "in Paris."] });
    const calls: string[] = [];
    const result = await run(await weatherAgent(calls), "What is the weather in Paris?");
    assert.deepEqual(calls, ["Paris"], "the tool ran once, with the scripted arguments");
    assert.equal(result.finalOutput, "It is sunny in Paris.");
    assertRoundTripUpstream(from, "Paris");
  });

  it("runs the same agent streamed (the Responses event stream) to completion", async () => {
    const from = upstream.chats().length;
    upstream.push({ call: { id: "call_weather_2", name: "get_weather", arguments: { city: "Oslo" } } }, { text: ["Oslo is ", "sunny too."] });
    const calls: string[] = [];
    const result = await run(await weatherAgent(calls), "And in Oslo?", { stream: true });
    let streamedText = "";
    for await (const event of result.toTextStream()) streamedText += event;
    await result.completed;
    assert.equal(result.error, null);
    assert.deepEqual(calls, ["Oslo"]);
    assert.equal(result.finalOutput, "Oslo is sunny too.");
    assert.equal(streamedText, "Oslo is sunny too.", "the text deltas spell the final output");
    assertRoundTripUpstream(from, "Oslo");
  });
});
