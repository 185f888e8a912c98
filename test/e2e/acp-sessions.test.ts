// serve-stdio --protocol acp through the SDK's client side, on a scripted OpenAI upstream: the
// initialize answer, a prompt's text chunks and usage, session/cancel mid-stream and while a
// permission question is open, and sessions that list and load (replayed) in a fresh process.
import assert from "node:assert/strict";
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { methods, type PromptResponse, type RequestPermissionResponse, type SessionUpdate } from "@agentclientprotocol/sdk";
import { AcpEditor } from "../helpers/acp-editor.js";
import { openaiModelYaml, startAgentUpstream, type AgentUpstream } from "../helpers/openai-agent-upstream.js";
import { tempConfig } from "../helpers/temp-config.js";

const upstreams: AgentUpstream[] = [];
after(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
});

async function setup(steps: Parameters<typeof startAgentUpstream>[0]): Promise<{ upstream: AgentUpstream; configPath: string; dir: string; ws: string }> {
  const upstream = await startAgentUpstream(steps);
  upstreams.push(upstream);
  const { dir, configPath } = await tempConfig(openaiModelYaml(upstream.baseUrl));
  const ws = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));
  return { upstream, configPath, dir, ws };
}

const open = (configPath: string, dir: string): AcpEditor => new AcpEditor(["--config", configPath], { cwd: dir });

const prompt = (editor: AcpEditor, sessionId: string, text: string): Promise<PromptResponse> =>
  editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

async function finish(editor: AcpEditor): Promise<void> {
  assert.equal((await editor.close()).code, 0, editor.stderr);
  assert.deepEqual(editor.stdoutViolations(), []);
}

describe("ACP: initialize and a prompt turn (openai engine)", () => {
  it("negotiates v1, advertises what the model takes, and streams the answer as chunks that assemble to it", async () => {
    const { upstream, configPath, dir, ws } = await setup([{ text: ["Hel", "lo, ", "editor", "!"] }]);
    const editor = open(configPath, dir);
    const init = await editor.initialize();
    assert.equal(init.protocolVersion, 1);
    assert.deepEqual(init.agentCapabilities, {
      loadSession: true,
      // The openai engine takes image input; the embedded demo model does not (acp-embedded.test.ts).
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: { list: {}, close: {}, resume: {}, delete: {} },
    });
    assert.equal(init.agentInfo?.name, "local-ai");
    assert.deepEqual(init.authMethods, []);
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    assert.match(sessionId, /^[0-9a-f]{16}$/);
    const response = await editor.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "Say hello" },
        { type: "resource", resource: { uri: `file://${ws}/a.txt`, text: "alpha", mimeType: "text/plain" } },
        { type: "resource_link", name: "b.txt", uri: `file://${ws}/b.txt` },
      ],
    });
    assert.equal(response.stopReason, "end_turn");
    assert.equal(editor.text(sessionId), "Hello, editor!");
    const chunks = editor.updates(sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk");
    assert.ok(chunks.length >= 1);
    assert.ok(chunks.every((u) => u.sessionUpdate === "agent_message_chunk" && typeof u.messageId === "string" && u.messageId === chunks[0]?.messageId), "one message id for the step");
    const usage = editor.updates(sessionId).find((u) => u.sessionUpdate === "usage_update");
    assert.deepEqual(usage, { sessionUpdate: "usage_update", used: 41 + 4, size: 8192 });
    // Embedded context and a resource link became the turn's text.
    const sent = (upstream.chats()[0]?.body as { messages: Array<{ role: string; content: string }> }).messages.at(-1);
    assert.equal(sent?.role, "user");
    assert.equal(sent?.content, `Say hello\n\nContents of file://${ws}/a.txt:\n\`\`\`\nalpha\n\`\`\`\n\n[linked: b.txt <file://${ws}/b.txt>]`);
    await finish(editor);
  });

  it("maps how a turn ended: max_tokens (length), refusal (content_filter), max_turn_requests (app.max_steps)", async () => {
    const loop = { call: { id: "x", name: "read_text_file", arguments: { path: "a" } } };
    const { configPath, dir, ws, upstream } = await setup([{ text: ["cut"], finish: "length" }, { text: ["no"], finish: "content_filter" }]);
    const editor = open(configPath, dir);
    await editor.initialize();
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    assert.equal((await prompt(editor, sessionId, "long")).stopReason, "max_tokens");
    assert.equal((await prompt(editor, sessionId, "bad")).stopReason, "refusal");
    // app.max_steps is 8: eight steps that each call a tool never end by themselves.
    upstream.push(...Array.from({ length: 8 }, (_, i) => ({ call: { ...loop.call, id: `x${i}` } })));
    assert.equal((await prompt(editor, sessionId, "loop")).stopReason, "max_turn_requests");
    await finish(editor);
  });
});

describe("ACP: session/cancel", () => {
  it("stops a prompt mid-stream: the answer is `cancelled` at once, the upstream request is dropped, the session goes on", async () => {
    const { upstream, configPath, dir, ws } = await setup([{ hang: ["partial ", "answer"] }]);
    const editor = open(configPath, dir);
    await editor.initialize();
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const answer = prompt(editor, sessionId, "talk forever");
    await editor.waitFor(() => editor.text(sessionId) === "partial answer", "the streamed text");
    const started = Date.now();
    await editor.agent.notify(methods.agent.session.cancel, { sessionId });
    const response = await answer;
    const elapsed = Date.now() - started;
    assert.equal(response.stopReason, "cancelled");
    // A generous bound (a loaded machine); the cancel itself is immediate.
    assert.ok(elapsed < 5000, `cancelled after ${elapsed} ms`);
    assert.equal((await upstream.chats()[0]?.closed)?.finished, false, "the upstream stream was abandoned, not read to its end");
    upstream.push({ text: ["still here"] });
    const before = editor.updates(sessionId).length;
    assert.equal((await prompt(editor, sessionId, "again")).stopReason, "end_turn");
    assert.equal(editor.text(sessionId, before), "still here");
    process.stderr.write(`# ACP cancel -> cancelled answer: ${elapsed} ms\n`);
    await finish(editor);
  });

  it("withdraws a pending permission request, and the call never runs", async () => {
    const { configPath, dir, ws } = await setup([{ call: { id: "w", name: "write_text_file", arguments: { path: "x.txt", content: "x" } } }]);
    const editor = open(configPath, dir);
    await editor.initialize();
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    // An editor whose user has not answered yet: it answers `cancelled` once the agent withdraws the question.
    editor.permissionPolicy = ({ signal }) =>
      new Promise<RequestPermissionResponse>((resolve) => signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), { once: true }));
    const answer = prompt(editor, sessionId, "write x");
    await editor.waitFor(() => editor.permissions.length === 1, "the permission request");
    await editor.agent.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await answer).stopReason, "cancelled");
    assert.equal(editor.permissions[0]?.signal.aborted, true, "the agent sent $/cancel_request for the question");
    assert.deepEqual(editor.writes, []);
    const trail = editor.updates(sessionId).filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
    assert.ok(!trail.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress"), "never started");
    await finish(editor);
  });
});

describe("ACP: shutdown", () => {
  for (const how of ["stdin EOF", "SIGTERM"] as const) {
    it(`${how} with a prompt running: it gets stdio.shutdown_grace_ms, then answers cancelled; exit 0`, async () => {
      const upstream = await startAgentUpstream([{ hang: ["never ", "ends"] }]);
      upstreams.push(upstream);
      const { dir, configPath } = await tempConfig(`stdio:\n  shutdown_grace_ms: 300\n${openaiModelYaml(upstream.baseUrl)}`);
      const ws = await realpath(await mkdtemp(path.join(tmpdir(), "local-ai-acp-ws-")));
      const editor = open(configPath, dir);
      await editor.initialize();
      const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
      const answer = prompt(editor, sessionId, "go on");
      await editor.waitFor(() => editor.text(sessionId) === "never ends", "the streamed text");
      if (how === "SIGTERM") editor.child.kill("SIGTERM");
      else editor.child.stdin.end();
      assert.equal((await answer).stopReason, "cancelled", "the answer is written before the process exits");
      assert.equal((await editor.exited).code, 0, editor.stderr);
      editor.connection.close();
      assert.deepEqual(editor.stdoutViolations(), []);
    });
  }
});

describe("ACP: sessions persist, list and load in a fresh process", () => {
  it("session/load replays the conversation (messages and tool calls with their final status) before it answers; the next prompt has the history", async () => {
    const { upstream, configPath, dir, ws } = await setup([
      { call: { id: "r1", name: "read_text_file", arguments: { path: "n.txt" } } },
      { text: ["The number is ", "7."] },
    ]);
    const first = open(configPath, dir);
    await first.initialize();
    first.buffers.set(path.join(ws, "n.txt"), "7");
    const { sessionId } = await first.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    assert.equal((await prompt(first, sessionId, "Remember   the number\nin n.txt")).stopReason, "end_turn");
    await finish(first);

    upstream.push({ text: ["It was 7."] });
    const second = open(configPath, dir);
    await second.initialize();
    const listed = await second.agent.request(methods.agent.session.list, { cwd: ws });
    assert.equal(listed.sessions.length, 1);
    assert.deepEqual({ ...listed.sessions[0], updatedAt: undefined }, { sessionId, cwd: ws, title: "Remember the number in n.txt", updatedAt: undefined });
    assert.deepEqual((await second.agent.request(methods.agent.session.list, { cwd: path.join(ws, "elsewhere") })).sessions, []);

    await second.agent.request(methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    // Everything replayed had arrived when the answer did.
    const replay: SessionUpdate[] = second.updates(sessionId);
    assert.deepEqual(
      replay.map((u) => u.sessionUpdate),
      ["user_message_chunk", "tool_call", "agent_message_chunk"],
    );
    assert.deepEqual(replay[0], { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Remember   the number\nin n.txt" } });
    const call = replay[1];
    assert.ok(call?.sessionUpdate === "tool_call");
    assert.equal(call.toolCallId, "r1");
    assert.equal(call.status, "completed");
    assert.equal(call.kind, "read");
    assert.deepEqual(call.rawInput, { path: "n.txt" });
    assert.deepEqual(call.content, [{ type: "content", content: { type: "text", text: "7" } }]);
    assert.deepEqual(replay[2], { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "The number is 7." } });

    assert.equal((await prompt(second, sessionId, "What was it?")).stopReason, "end_turn");
    const messages = (upstream.chats().at(-1)?.body as { messages: Array<{ role: string; content: string | null }> }).messages;
    assert.deepEqual(
      messages.filter((m) => m.role !== "system").map((m) => [m.role, m.content]),
      [["user", "Remember   the number\nin n.txt"], ["assistant", ""], ["tool", "7"], ["assistant", "The number is 7."], ["user", "What was it?"]],
    );
    await finish(second);
  });

  it("an unknown or closed session is -32002 (not found) with its id, and session/close is idempotent for the client", async () => {
    const { configPath, dir, ws } = await setup([]);
    const editor = open(configPath, dir);
    await editor.initialize();
    const notFound = (id: string) => (error: { code?: number; data?: { sessionId?: string } }): boolean => error.code === -32002 && error.data?.sessionId === id;
    await assert.rejects(editor.agent.request(methods.agent.session.load, { sessionId: "feedfacefeedface", cwd: ws, mcpServers: [] }), notFound("feedfacefeedface"));
    await assert.rejects(editor.agent.request(methods.agent.session.load, { sessionId: "../../etc", cwd: ws, mcpServers: [] }), notFound("../../etc"));
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await editor.agent.request(methods.agent.session.close, { sessionId });
    await assert.rejects(prompt(editor, sessionId, "hello?"), notFound(sessionId));
    // The SDK's client treats -32002 on close as done: closing twice is not an error for an editor.
    await editor.agent.request(methods.agent.session.close, { sessionId });
    await finish(editor);
  });
});
