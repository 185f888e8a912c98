// ACP session config options through the SDK's client side: the model picker (two agents on two
// generated GGUF models, real inference) and the thinking switch (a scripted OpenAI upstream that
// streams reasoning), `session/set_config_option` and its errors, the choice stored with the
// session (`load` and `resume` in a fresh process), a model that fails to load falling back, and
// `session/delete` removing every file of the session.
import assert from "node:assert/strict";
import { mkdtemp, readdir, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { methods, type PromptResponse, type SessionConfigOption } from "@agentclientprotocol/sdk";
import { AcpEditor } from "../helpers/acp-editor.js";
import { configYaml, localModel, openaiModel } from "../helpers/config-yaml.js";
import { startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";

const upstreams: AgentUpstream[] = [];
after(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
});

let smallPath = "";
let largePath = "";
before(async () => {
  [smallPath, largePath] = await Promise.all([ensureFixture("demo"), ensureFixture("demo", { contextLength: 2048 })]);
});

const workspace = async (): Promise<string> => realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));

const prompt = (editor: AcpEditor, sessionId: string, text: string): Promise<PromptResponse> =>
  editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

async function finish(editor: AcpEditor): Promise<void> {
  assert.equal((await editor.close()).code, 0, editor.stderr);
  assert.deepEqual(editor.stdoutViolations(), []);
}

const option = (options: readonly SessionConfigOption[] | null | undefined, id: string): SessionConfigOption | undefined => options?.find((o) => o.id === id);

const invalid = (pattern: RegExp) => (error: { code?: number; message?: string }): boolean => error.code === -32602 && pattern.test(String(error.message));

/** Every file below `dir` (relative paths). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe("ACP: the model option (two agents on two generated models, embedded engine)", () => {
  it("offers both agents, switches to the second for the next prompt, keeps the choice across load and resume, and delete removes every file", async () => {
    const { dir, configPath } = await tempConfig(
      configYaml({
        llama: { models: { small: localModel(smallPath, { ctx_size: 1024 }), large: localModel(largePath, { ctx_size: 2048 }) } },
        agents: { quick: { model: "small", temperature: 0 }, deep: { model: "large", temperature: 0 } },
      }),
    );
    const ws = await workspace();
    const first = new AcpEditor(["--config", configPath], { cwd: dir });
    const init = await first.initialize({});
    assert.deepEqual(init.agentCapabilities?.sessionCapabilities, { list: {}, close: {}, resume: {}, delete: {} });
    const created = await first.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const { sessionId } = created;
    // The demo models' chat template (ChatML) has no thinking part: no thinking option.
    assert.deepEqual(created.configOptions, [
      {
        id: "model",
        name: "Model",
        description: "The agent (and its model) that answers the next prompts",
        category: "model",
        type: "select",
        currentValue: "quick",
        options: [
          { value: "quick", name: "quick (small)", description: "agent quick on model small" },
          { value: "deep", name: "deep (large)", description: "agent deep on model large" },
        ],
      },
    ]);
    assert.equal((await prompt(first, sessionId, "Hello!")).stopReason, "end_turn");
    const sizes = (): number[] => first.updates(sessionId).flatMap((u) => (u.sessionUpdate === "usage_update" ? [u.size] : []));
    assert.deepEqual(sizes(), [1024]);

    // Bad ids and values: -32602 naming the valid ones.
    await assert.rejects(first.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "temperature", value: "hot" }), invalid(/Unknown config option "temperature"; this session offers: model$/));
    await assert.rejects(first.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "thinking", type: "boolean", value: false }), invalid(/this session offers: model$/));
    await assert.rejects(first.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "huge" }), invalid(/Unknown value "huge" for config option "model"; valid values: quick, deep$/));

    const set = await first.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "deep" });
    assert.equal(option(set.configOptions, "model")?.currentValue, "deep");
    assert.equal(set._meta, undefined, "nothing was running: no note");
    const from = first.updates(sessionId).length;
    assert.equal((await prompt(first, sessionId, "Hello again!")).stopReason, "end_turn");
    assert.equal(first.text(sessionId, from), DEMO_SENTENCE);
    // The second model loaded through the scheduler (its plan), and the usage is its context.
    const plans = first.updates(sessionId).slice(from).flatMap((u) => (u.sessionUpdate === "plan" ? u.entries.map((e) => e.content) : []));
    assert.deepEqual([plans[0], plans.at(-1)], ["Loading model large", "Loaded model large"]);
    assert.deepEqual(sizes(), [1024, 2048]);
    await finish(first);

    // A fresh process: load replays and comes back with the choice; so does resume, without replaying.
    const second = new AcpEditor(["--config", configPath], { cwd: dir });
    await second.initialize({});
    const loaded = await second.agent.request(methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    assert.equal(option(loaded.configOptions, "model")?.currentValue, "deep");
    assert.ok(second.updates(sessionId).some((u) => u.sessionUpdate === "user_message_chunk"), "load replays");
    await finish(second);

    const third = new AcpEditor(["--config", configPath], { cwd: dir });
    await third.initialize({});
    const resumed = await third.agent.request(methods.agent.session.resume, { sessionId, cwd: ws, mcpServers: [] });
    assert.equal(option(resumed.configOptions, "model")?.currentValue, "deep");
    assert.deepEqual(third.updates(sessionId), [], "resume replays nothing");
    assert.equal((await prompt(third, sessionId, "Still there?")).stopReason, "end_turn");
    assert.deepEqual(third.updates(sessionId).flatMap((u) => (u.sessionUpdate === "usage_update" ? [u.size] : [])), [2048]);

    // Delete while it is open (and its model holds its KV state): nothing of it stays on disk.
    const data = path.join(dir, "data");
    assert.ok((await filesUnder(path.join(data, "kv-cache"))).length > 0, "the first process saved the session's KV states at exit");
    assert.deepEqual(await third.agent.request(methods.agent.session.delete, { sessionId }), {});
    const notFound = (error: { code?: number; data?: { sessionId?: string } }): boolean => error.code === -32002 && error.data?.sessionId === sessionId;
    await assert.rejects(prompt(third, sessionId, "hello?"), notFound);
    await assert.rejects(third.agent.request(methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] }), notFound);
    await assert.rejects(third.agent.request(methods.agent.session.resume, { sessionId, cwd: ws }), notFound);
    // Deleting again: the agent answers -32002, which the SDK's client resolves (close and delete are idempotent for editors).
    assert.deepEqual(await third.agent.request(methods.agent.session.delete, { sessionId }), {});
    const errors = third.stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { error?: { code: number; data?: { sessionId?: string } } });
    assert.deepEqual(errors.filter((m) => m.error !== undefined).at(-1)?.error, { code: -32002, message: "Resource not found", data: { sessionId } });
    // An id that could not be a session folder never reaches a path: not found, nothing removed.
    assert.deepEqual(await third.agent.request(methods.agent.session.delete, { sessionId: "../../.." }), {});
    const last = JSON.parse(third.stdout.trimEnd().split("\n").at(-1) ?? "{}") as { error?: unknown };
    assert.deepEqual(last.error, { code: -32002, message: "Resource not found", data: { sessionId: "../../.." } });
    assert.ok((await readdir(dir)).includes("config.yaml"), "the folder above data_dir is untouched");
    assert.deepEqual((await third.agent.request(methods.agent.session.list, {})).sessions, []);
    await finish(third);
    // After the process exited too (an engine saves what its sequences hold when it closes).
    assert.deepEqual(await filesUnder(path.join(data, "sessions")), []);
    assert.deepEqual(await filesUnder(path.join(data, "kv-cache")), []);
  });
});

describe("ACP: the thinking option and fallbacks (openai engine)", () => {
  async function setup(): Promise<{ upstream: AgentUpstream; dir: string; configPath: string; ws: string }> {
    const upstream = await startAgentUpstream([]);
    upstreams.push(upstream);
    const { dir, configPath } = await tempConfig(
      configYaml({
        llama: { models: { default: { ...openaiModel(upstream.baseUrl, "test-model"), ctx_size: 8192 }, gone: localModel("/nonexistent/local-ai-test/missing.gguf") } },
        agents: { assistant: { model: "default", temperature: 0 }, broken: { model: "gone", temperature: 0 } },
      }),
    );
    return { upstream, dir, configPath, ws: await workspace() };
  }

  it("thinking off (set while a prompt runs) applies from the next prompt: no thought chunks, reasoning_effort none; stored for load", async () => {
    const { upstream, dir, configPath, ws } = await setup();
    const editor = new AcpEditor(["--config", configPath], { cwd: dir });
    await editor.initialize({ session: { configOptions: { boolean: {} } } });
    const { sessionId, configOptions } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    assert.deepEqual(option(configOptions, "thinking"), {
      id: "thinking",
      name: "Thinking",
      description: "Whether the model thinks before it answers (from the next prompt)",
      category: "thought_level",
      type: "boolean",
      currentValue: true,
    });
    upstream.push({ reasoning: ["Let me ", "think."], text: ["One."] });
    assert.equal((await prompt(editor, sessionId, "first")).stopReason, "end_turn");
    const thoughts = (from: number): string[] =>
      editor.updates(sessionId).slice(from).flatMap((u) => (u.sessionUpdate === "agent_thought_chunk" && u.content.type === "text" ? [u.content.text] : []));
    assert.equal(thoughts(0).join(""), "Let me think.");

    upstream.push({ hang: ["Two"] });
    const running = prompt(editor, sessionId, "second");
    await editor.waitFor(() => editor.text(sessionId).endsWith("Two"), "the running prompt's text");
    const set = await editor.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "thinking", type: "boolean", value: false });
    assert.equal(option(set.configOptions, "thinking")?.currentValue, false);
    assert.deepEqual(set._meta, { "local-ai": { appliesFrom: "next_prompt", message: "A prompt is running: it finishes with the earlier setting; the change applies from the next prompt." } });
    assert.equal((upstream.chats()[1]?.body as { reasoning_effort?: string }).reasoning_effort, undefined, "the running prompt started with thinking on");
    await editor.agent.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await running).stopReason, "cancelled");

    upstream.push({ reasoning: ["Secret ", "thoughts."], text: ["Three."] });
    const from = editor.updates(sessionId).length;
    assert.equal((await prompt(editor, sessionId, "third")).stopReason, "end_turn");
    assert.equal(editor.text(sessionId, from), "Three.");
    assert.deepEqual(thoughts(from), []);
    assert.equal((upstream.chats()[2]?.body as { reasoning_effort?: string }).reasoning_effort, "none");
    await finish(editor);

    // A fresh process, an editor without boolean options: the same choice, as a select.
    const again = new AcpEditor(["--config", configPath], { cwd: dir });
    await again.initialize({});
    const loaded = await again.agent.request(methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    assert.deepEqual(option(loaded.configOptions, "thinking"), {
      id: "thinking",
      name: "Thinking",
      description: "Whether the model thinks before it answers (from the next prompt)",
      category: "thought_level",
      type: "select",
      currentValue: "off",
      options: [
        { value: "on", name: "On" },
        { value: "off", name: "Off" },
      ],
    });
    await assert.rejects(again.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "thinking", value: "maybe" }), invalid(/valid values: on, off, true, false$/));
    const on = await again.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "thinking", value: "on" });
    assert.equal(option(on.configOptions, "thinking")?.currentValue, "on");
    await finish(again);
  });

  it("a chosen model that fails to load: the prompt answers its error, and the picker falls back to the default agent (config_option_update)", async () => {
    const { dir, configPath, ws } = await setup();
    const editor = new AcpEditor(["--config", configPath], { cwd: dir });
    await editor.initialize({});
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const set = await editor.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "broken" });
    assert.equal(option(set.configOptions, "model")?.currentValue, "broken");
    // A model whose file is not there cannot think either: no thinking option for it.
    assert.equal(option(set.configOptions, "thinking"), undefined);
    await assert.rejects(prompt(editor, sessionId, "hello"), (error: { code?: number; data?: { code?: string } }) => error.code === -32603 && error.data?.code === "model_missing");
    await editor.waitFor(() => editor.updates(sessionId).some((u) => u.sessionUpdate === "config_option_update"), "the fallback's config_option_update");
    const update = editor.updates(sessionId).find((u) => u.sessionUpdate === "config_option_update");
    assert.ok(update?.sessionUpdate === "config_option_update");
    assert.equal(option(update.configOptions, "model")?.currentValue, "assistant");
    assert.equal(option(update.configOptions, "thinking")?.currentValue, "on");
    await finish(editor);
  });
});
