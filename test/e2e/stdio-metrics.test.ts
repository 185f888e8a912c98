// The `metrics` method over stdio through the host client (LocalAiClient.metrics(), every line
// checked against schema/), after a real tool call (demo model in tool mode, the MCP `everything`
// server's echo); and the request's protocol id on every log line of its turn.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { LocalAiClient, type LogRecord, type MetricsResult } from "../../src/client/index.js";
import { configYaml, localModel, mcpServer } from "../helpers/config-yaml.js";
import { tempConfig } from "../helpers/temp-config.js";
import { WireTap } from "../helpers/wire-recorder.js";
import { DEMO_SENTENCE, DEMO_TOOL_TRIGGER, ensureFixture } from "../fixtures/gguf/index.js";

const require = createRequire(import.meta.url);
const everything = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js");

let client: LocalAiClient;
const records: LogRecord[] = [];
const waiters: Array<{ match: (record: LogRecord) => boolean; resolve: (record: LogRecord) => void }> = [];
const collect = (level: LogRecord["level"]) => (fields: Record<string, unknown>, msg: string): void => {
  const record = { ...fields, level, msg };
  records.push(record);
  for (const waiter of waiters.filter((candidate) => candidate.match(record))) waiter.resolve(record);
};

/** The first log record (so far, or still to come on stderr) that matches. */
function logged(match: (record: LogRecord) => boolean): Promise<LogRecord> {
  const found = records.find(match);
  return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ match, resolve }));
}

before(async () => {
  const toolModel = await ensureFixture("demo", { toolMode: true });
  const { configPath } = await tempConfig(
    configYaml({
      llama: { models: { default: localModel(toolModel) } },
      agents: { assistant: { temperature: 0, tools: ["echo"] } },
      mcp: { servers: { everything: mcpServer({ command: process.execPath, args: [everything, "stdio"] }) } },
    }),
  );
  client = new LocalAiClient({
    config: configPath,
    env: { LOCAL_AI_LOG_LEVEL: "info" },
    trace: new WireTap("v1", "LocalAiClient metrics").trace,
    logger: { debug: collect("debug"), info: collect("info"), warn: collect("warn"), error: collect("error") },
  });
  await client.start();
});

after(async () => {
  await client?.close();
});

/** The value of the sample with exactly these labels (0 when the series has none yet). */
function value(snapshot: MetricsResult, sample: string, labels: Record<string, string>): number {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  for (const series of snapshot.metrics) {
    for (const found of series.samples) if (found.name === sample && JSON.stringify(Object.entries(found.labels).sort()) === wanted) return found.value;
  }
  return 0;
}

describe("metrics over stdio (LocalAiClient on the built CLI)", () => {
  it("a snapshot with the process defaults and the local_ai series; a tool call and the model's load are counted", async () => {
    const first = await client.metrics();
    const names = new Set(first.metrics.map((series) => series.name));
    for (const name of ["process_cpu_user_seconds_total", "local_ai_tool_calls_total", "local_ai_model_load_seconds", "local_ai_queue_depth", "local_ai_approvals_waiting"]) assert.ok(names.has(name), name);
    assert.equal(first.metrics.find((series) => series.name === "local_ai_model_load_seconds")?.type, "histogram");

    const turn = client.chat({ session_id: "metrics-1", input: `please ${DEMO_TOOL_TRIGGER} hi` });
    const usage = { prompt: 0, generated: 0 };
    for await (const event of turn) {
      if (event.event !== "usage") continue;
      usage.prompt += event.input_tokens;
      usage.generated += event.output_tokens;
    }
    const result = await turn.result;
    assert.equal(result.response, DEMO_SENTENCE);

    const after = await client.metrics();
    assert.equal(value(after, "local_ai_tool_calls_total", { agent: "assistant", server: "everything", tool: "echo", outcome: "ok" }), 1);
    assert.equal(value(after, "local_ai_model_load_seconds_count", { model: "default" }), 1);
    assert.equal(value(after, "local_ai_queue_wait_seconds_count", { model: "default" }), 1);
    assert.equal(value(after, "local_ai_queue_depth", { model: "default" }), 0);
    // The chat call as a request: counted when it answered, its two steps' tokens exactly.
    const chat = { agent: "assistant", model: "default", endpoint: "chat", key: "none" };
    assert.equal(value(after, "local_ai_requests_total", { ...chat, status: "ok" }), 1);
    assert.ok(usage.prompt > 0 && usage.generated > 0);
    assert.equal(value(after, "local_ai_prompt_tokens_total", chat), usage.prompt);
    assert.equal(value(after, "local_ai_generated_tokens_total", chat), usage.generated);
    assert.equal(value(after, "local_ai_time_to_first_token_seconds_count", chat), 1);
    assert.equal(value(after, "local_ai_requests_in_flight", { endpoint: "chat" }), 0);
    assert.ok(value(after, "local_ai_model_memory_bytes", { model: "default" }) > 0, "the loaded model's memory");
    // No label carries the session id.
    const labels = after.metrics.flatMap((series) => series.samples.flatMap((sample) => Object.values(sample.labels)));
    assert.ok(!labels.some((label) => label.includes("metrics-1")));

    // Every log line of the turn (the agent's own included) carries the request's protocol id.
    // stderr is its own stream: the turn's last line may come after the answer.
    await logged((record) => record.trace_id === result.trace_id && record.msg === "turn finished");
    const ofTurn = records.filter((record) => record.trace_id === result.trace_id);
    for (const record of ofTurn) assert.equal(record.req_id, turn.id, JSON.stringify(record));
    // So do the lines of shared components the call set going: the model's load, by the engine.
    const load = await logged((record) => record.msg === "embedded model loaded");
    assert.equal(load.req_id, turn.id, JSON.stringify(load));
  });
});
