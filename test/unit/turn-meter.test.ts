// Every front door's turns reach the metrics through the one turn meter (SessionRunner, fed by
// the turn's usage): a Pod turn (the PodHub both pod transports share) and an ACP prompt (the
// ACP server in process, driven by the official SDK's client side) are counted under their own
// endpoint, with the turn's agent and model, exactly their steps' tokens. Scripted engine, real
// store, a real PromMetrics registry.
import assert from "node:assert/strict";
import { PassThrough, Readable, Writable } from "node:stream";
import { describe, it } from "node:test";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { pino } from "pino";
import { runAcpServer } from "../../src/acp/acp-server.js";
import { PromMetrics } from "../../src/app/metrics/prom-metrics.js";
import { PodHub } from "../../src/pod/pod-hub.js";
import type { PodEvent } from "../../src/pod/pod-event-types.js";
import type { MetricsSnapshot } from "../../src/protocol/methods/metrics.js";
import { agentHarness } from "../helpers/agent-harness.js";
import { ScriptedToolProvider } from "../helpers/mcp-scripted-tools.js";
import { callTool, say, ScriptedEngine } from "../helpers/scripted-engine.js";

const schema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };

/** The value of the sample with exactly these labels (undefined: no such series). */
function sample(snapshot: MetricsSnapshot, name: string, labels: Record<string, string>): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  return snapshot.metrics.find((series) => series.name === name)?.samples.find((found) => JSON.stringify(Object.entries(found.labels).sort()) === wanted)?.value;
}

function tokens(snapshot: MetricsSnapshot, endpoint: string): [number | undefined, number | undefined, number | undefined] {
  const labels = { agent: "assistant", model: "default", endpoint, key: "none" };
  return [sample(snapshot, "local_ai_prompt_tokens_total", labels), sample(snapshot, "local_ai_cached_prompt_tokens_total", labels), sample(snapshot, "local_ai_generated_tokens_total", labels)];
}

describe("the turn meter: Pod and ACP turns reach the metrics", () => {
  it("a Pod turn (PodHub, two model steps and a tool call) counts its tokens under endpoint pod", async () => {
    // Two steps: 10 prompt + 5 generated (the call), 10 + 4 ("done").
    const engine = new ScriptedEngine([callTool("echo", { text: "hi" }), say("done")]);
    const tools = new ScriptedToolProvider([{ name: "echo", inputSchema: schema, replies: { content: "echo: hi" } }]);
    const metrics = new PromMetrics(() => null);
    const h = await agentHarness(engine, tools, "", undefined, metrics);
    const hub = new PodHub({ sessionId: "pod-metered", podName: "assistant", runner: () => h.runner, logger: pino({ level: "silent" }) });
    await hub.restore();
    const ended = new Promise<PodEvent>((resolve) => hub.listen((event) => event.event === "turn_end" && resolve(event)));
    hub.handle({ method: "run", input: "say hi" }, (refusal) => assert.fail(JSON.stringify(refusal)));
    assert.deepEqual((await ended).data, { turn: 1, result: "finished" });
    assert.deepEqual(tokens(await metrics.snapshot(), "pod"), [20, 0, 9]);
    await hub.stop(1000);
  });

  it("an ACP prompt (the ACP server in process, the SDK's client) counts its tokens under endpoint acp", async () => {
    const engine = new ScriptedEngine([say("Hello there")]);
    const tools = new ScriptedToolProvider([]);
    const metrics = new PromMetrics(() => null);
    const h = await agentHarness(engine, tools, "", undefined, metrics);
    const toAgent = new PassThrough();
    const fromAgent = new PassThrough();
    const logger = pino({ level: "silent" });
    const server = runAcpServer({
      input: toAgent,
      output: fromAgent,
      logger,
      limits: { maxLineBytes: 1 << 20, flushTimeoutMs: 1000, shutdownGraceMs: 1000, maxInFlight: 8 },
      deps: {
        agentInfo: { name: "local-ai", version: "0.0.0-test" },
        logger,
        coalesceMs: 0,
        takesImages: async () => false,
        core: async () => ({
          runner: h.runner,
          catalog: h.store.catalog,
          sessionTools: () => tools,
          maxToolOutputBytes: 4096,
          contextSize: () => 4096,
          mcpLogins: { needing: () => [], login: async () => assert.fail("no login") },
          models: { agents: () => [{ name: "assistant", model: "default" }], downloaded: async () => [], thinks: async () => false, canStopThinking: () => false },
          deleteSession: async () => false,
        }),
      },
    });
    const editor = client({ name: "test-editor" })
      .onNotification(methods.client.session.update, () => undefined)
      .connect(ndJsonStream(Writable.toWeb(toAgent) as WritableStream<Uint8Array>, Readable.toWeb(fromAgent) as ReadableStream<Uint8Array>));
    await editor.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: { name: "test-editor", version: "1.0.0" } });
    const { sessionId } = await editor.agent.request(methods.agent.session.new, { cwd: h.dataDir, mcpServers: [] });
    const answer = await editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] });
    assert.equal(answer.stopReason, "end_turn");
    assert.deepEqual(tokens(await metrics.snapshot(), "acp"), [10, 0, "Hello there".length]);
    toAgent.end();
    assert.equal((await server).exitCode, 0);
    editor.close();
  });
});
