import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { splitConversation } from "../../src/agent/stateless-turn.js";
import { resolveSampling } from "../../src/agent/turn-settings.js";
import { toolCallChunks } from "../../src/http/openai/completion.js";
import { assertSupported, ignoredFieldWarnings, toClientTools, toConversation, toOverrides, userIdFor } from "../../src/http/openai/request-mapping.js";
import { parseChatRequest } from "../../src/http/openai/request-schema.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";

const agent = { model: "default", system_prompt: "Agent.", tools: ["*"], temperature: 0.7, seed: null, max_tokens: 1024, memory: true, memory_tokens: 256 };

describe("OpenAI request -> turn", () => {
  it("maps the whole conversation: developer/system, parts, assistant tool_calls, tool results with their call's name", () => {
    const request = parseChatRequest({
      messages: [
        { role: "developer", content: [{ type: "text", text: "Be " }, { type: "text", text: "brief." }] },
        { role: "user", content: "weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "sunny" },
      ],
    });
    assert.deepEqual(toConversation(request.messages), [
      { role: "system", content: "Be brief." },
      { role: "user", content: "weather?" },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "weather", arguments: '{"city":"Paris"}' }] },
      { role: "tool", tool_call_id: "c1", name: "weather", content: "sunny" },
    ]);
  });

  it("splits it: agent prompt then client system text; history before the last user message; the turn from it on", () => {
    const split = splitConversation("Agent.", [
      { role: "system", content: "Client." },
      { role: "user", content: "one" },
      { role: "assistant", content: "a" },
      { role: "user", content: "two" },
      { role: "assistant", content: "", tool_calls: [{ id: "c", name: "f", arguments: "{}" }] },
      { role: "tool", tool_call_id: "c", name: "f", content: "r" },
    ]);
    assert.deepEqual(split.system, { role: "system", content: "Agent.\n\nClient." });
    assert.deepEqual(split.history.map((m) => m.role), ["user", "assistant"]);
    assert.deepEqual(split.turn.map((m) => m.role), ["user", "assistant", "tool"]);
    assert.throws(() => splitConversation("A", [{ role: "assistant", content: "x" }]), (e: unknown) => e instanceof RuntimeError && e.details?.param === "messages");
    assert.throws(() => splitConversation("A", [{ role: "user", content: "x" }, { role: "assistant", content: "", tool_calls: [{ id: "c", name: "f", arguments: "{}" }] }]), /without tool results/);
  });

  it("sampling fields override the agent's config; tool_choice none offers no tools", () => {
    const request = parseChatRequest({
      messages: [{ role: "user", content: "x" }], temperature: 0, top_p: 0.5, max_tokens: 9, max_completion_tokens: 7, stop: "END", seed: 3,
      frequency_penalty: 0.1, presence_penalty: -0.2, parallel_tool_calls: false, tool_choice: "none",
      response_format: { type: "json_schema", json_schema: { name: "n", schema: { type: "object" }, strict: true } },
    });
    const overrides = toOverrides(request);
    assert.deepEqual(overrides, {
      temperature: 0, topP: 0.5, maxTokens: 7, stop: ["END"], seed: 3, frequencyPenalty: 0.1, presencePenalty: -0.2, parallelToolCalls: false, toolChoice: "none",
      responseFormat: { type: "json_schema", name: "n", schema: { type: "object" }, strict: true },
    });
    const sampling = resolveSampling(agent, overrides);
    assert.equal(sampling.temperature, 0);
    assert.equal(sampling.maxTokens, 7);
    assert.equal(sampling.noTools, true);
    assert.equal(sampling.stepOptions.toolChoice, undefined);
    assert.deepEqual(resolveSampling(agent, {}), { temperature: 0.7, maxTokens: 1024, seed: null, stepOptions: {}, noTools: false });
  });

  it("client tools, refused fields, ignored fields and user ids", () => {
    const request = parseChatRequest({ messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "f" } }] });
    assert.deepEqual(toClientTools(request), [{ name: "f", parameters: { type: "object", properties: {} } }]);
    assert.equal(toClientTools(parseChatRequest({ messages: [], tools: [] })), undefined, "an empty tools list means the agent's tools");
    for (const [body, param] of [[{ n: 3 }, "n"], [{ logprobs: true }, "logprobs"], [{ top_logprobs: 2 }, "top_logprobs"]] as const) {
      assert.throws(() => assertSupported(parseChatRequest({ messages: [], ...body })), (e: unknown) => e instanceof RuntimeError && e.details?.param === param);
    }
    assert.doesNotThrow(() => assertSupported(parseChatRequest({ messages: [], n: 1, logprobs: false })));
    assert.deepEqual(ignoredFieldWarnings({ messages: [], model: "a", store: true, logit_bias: {} }), ['ignored field "store": not supported by this server', 'ignored field "logit_bias": not supported by this server']);
    assert.equal(userIdFor(undefined), "default_user");
    assert.equal(userIdFor("bob"), "bob");
    const hashed = userIdFor("bob@example.com");
    assert.match(hashed, /^u_[0-9a-f]{32}$/);
    assert.equal(userIdFor("bob@example.com"), hashed, "stable");
    assert.notEqual(userIdFor("../../etc"), "../../etc");
  });

  it("tool calls stream as OpenAI does: index, id, type and name first, then argument fragments", () => {
    const chunks = toolCallChunks({ id: "i", created: 1, model: "m" }, [{ id: "c1", name: "f", arguments: '{"a":"0123456789"}' }], 8);
    const deltas = chunks.map((c) => ((c.choices as Array<{ delta: { tool_calls: Array<Record<string, unknown>> } }>)[0]?.delta.tool_calls[0]));
    assert.deepEqual(deltas[0], { index: 0, id: "c1", type: "function", function: { name: "f", arguments: "" } });
    assert.equal(deltas.slice(1).map((d) => (d?.function as { arguments: string }).arguments).join(""), '{"a":"0123456789"}');
    assert.ok(deltas.slice(1).every((d) => d?.index === 0 && !("id" in (d ?? {}))));
  });
});
