// The Messages request -> the conversation the engines take (src/http/messages/): pure mapping,
// so each rule is checked on its own; the wire itself is tested end to end in http-messages.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toConversation } from "../../src/http/messages/messages-content.js";
import { parseMessagesRequest, unreadFieldWarnings } from "../../src/http/messages/messages-schema.js";
import { toClientTools, toOverrides } from "../../src/http/messages/messages-tools.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";

const request = (fields: Record<string, unknown>) => parseMessagesRequest({ model: "m", max_tokens: 10, ...fields });

const refusedWith = (param: string) => (error: unknown): boolean => {
  assert.ok(error instanceof RuntimeError, String(error));
  assert.equal(error.details?.param, param, error.message);
  assert.ok(error.message.startsWith(`${param}: `), error.message);
  return true;
};

describe("Messages request mapping", () => {
  it("system blocks without the billing header, then system messages; tool_use -> tool_calls; tool_result before the user's text", () => {
    const conversation = toConversation(
      request({
        system: [{ type: "text", text: "x-anthropic-billing-header: cc_version=1;" }, { type: "text", text: "You are X.", cache_control: { type: "ephemeral" } }, { type: "text", text: "Be brief." }],
        messages: [
          { role: "user", content: [{ type: "text", text: "hi" }, { type: "document", source: { type: "text", media_type: "text/plain", data: "DOC" }, title: "T" }] },
          { role: "system", content: [{ type: "text", text: "env" }] },
          { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s" }, { type: "text", text: "ok" }, { type: "tool_use", id: "tu1", name: "Bash", input: { command: "ls" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }], is_error: true }, { type: "text", text: "next" }] },
        ],
      }),
      { images: false },
    );
    assert.deepEqual(conversation, [
      { role: "system", content: "You are X.\n\nBe brief." },
      { role: "user", content: "hi\n\nT\n\nDOC" },
      { role: "system", content: "env" },
      { role: "assistant", content: "ok", tool_calls: [{ id: "tu1", name: "Bash", arguments: '{"command":"ls"}' }] },
      { role: "tool", tool_call_id: "tu1", name: "Bash", content: "a\n\nb", is_error: true },
      { role: "user", content: "next" },
    ]);
  });

  it("images: a data URL or a URL where the model takes images, a refusal naming the block where it does not", () => {
    const image = { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }, { type: "image", source: { type: "url", url: "https://x/y.png" } }] };
    assert.deepEqual(toConversation(request({ messages: [image] }), { images: true }), [
      { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, { type: "image_url", image_url: { url: "https://x/y.png" } }] },
    ]);
    assert.throws(() => toConversation(request({ messages: [image] }), { images: false }), refusedWith("messages.0.content.0"));
    assert.throws(() => toConversation(request({ messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "f" } }] }] }), { images: true }), refusedWith("messages.0.content.0.source.type"));
  });

  it("refusals name the field: unknown block, result without its call, a call without its result, missing fields", () => {
    const map = (messages: unknown[]) => () => toConversation(request({ messages }), { images: false });
    assert.throws(map([{ role: "user", content: [{ type: "text", text: "a" }, { type: "search_result", x: 1 }] }]), refusedWith("messages.0.content.1.type"));
    assert.throws(map([{ role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] }]), refusedWith("messages.0.content.0.tool_use_id"));
    assert.throws(map([{ role: "user", content: "a" }, { role: "assistant", content: [{ type: "tool_use", id: "t", name: "B", input: {} }] }]), refusedWith("messages.1.content"));
    assert.throws(map([{ role: "user", content: [{ type: "text" }] }]), refusedWith("messages.0.content.0.text"));
    assert.throws(() => parseMessagesRequest({ model: "m", messages: [] }), refusedWith("max_tokens"));
    assert.throws(() => parseMessagesRequest({ model: "m", max_tokens: 1, messages: [{ role: "tool", content: "x" }] }), refusedWith("messages.0.role"));
  });

  it("tools: client tools offered, server tools skipped with a warning; tool_choice and sampling in engine terms; unread fields named", () => {
    const parsed = request({
      messages: [{ role: "user", content: "x" }],
      tools: [{ name: "Bash", input_schema: { type: "object" }, defer_loading: true }, { type: "bash_20250124", name: "bash" }, { type: "custom", name: "Read", description: "r", input_schema: { type: "object" } }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      stop_sequences: ["END", ""],
      temperature: 0.2,
      top_k: 5,
    });
    const tools = toClientTools(parsed);
    assert.deepEqual(tools.specs, [{ name: "Bash", parameters: { type: "object" } }, { name: "Read", description: "r", parameters: { type: "object" } }]);
    assert.deepEqual(tools.warnings, ['tools.1: server tool type "bash_20250124" is not served by this server; skipped']);
    const { overrides, warnings } = toOverrides(parsed, tools);
    assert.deepEqual(overrides, { maxTokens: 10, temperature: 0.2, stop: ["END"], parallelToolCalls: false, toolChoice: "required", topK: 5 });
    const disabled = toOverrides(request({ messages: [{ role: "user", content: "x" }], thinking: { type: "disabled" }, output_config: { effort: "high" } }), { specs: undefined, warnings: [] });
    assert.deepEqual(disabled.overrides, { maxTokens: 10, reasoningEffort: "none" });
    assert.deepEqual(warnings, []);
    assert.deepEqual(unreadFieldWarnings({ model: "m", max_tokens: 1, messages: [], safeguards: {}, output_config: {} }), ["safeguards: not implemented by this server; ignored", "output_config: not implemented by this server; ignored"]);
  });
});
