// The context budget on the llama-server engine, against the real binary: tokens counted by the
// server's tokenizer (the same counts node-llama-cpp gives for the same GGUF), tool schemas as the
// model's chat template renders them, and a slot's context as the window; through the CLI, an
// input or tool schemas that cannot fit are `context_overflow` with those numbers.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import { pino } from "pino";
import type { ToolSpec } from "../../src/shared/conversation/tool-spec.js";
import { EmbeddedEngine } from "../../src/engine/embedded/embedded-engine.js";
import { LlamaRuntime } from "../../src/engine/embedded/llama-runtime.js";
import { HelpProbe } from "../../src/engine/llama-server/help-probe.js";
import { LlamaServerEngine } from "../../src/engine/llama-server/llama-server-engine.js";
import { ChildRegistry } from "../../src/shared/process/child-registry.js";
import { DEMO_SENTENCE, ensureFixture } from "../fixtures/gguf/index.js";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { llamaModelConfig } from "../helpers/llama-server-process.js";
import { everythingServer } from "../helpers/mcp-servers.js";
import { tempConfig } from "../helpers/temp-config.js";
import { freePort } from "../helpers/free-port.js";

const binary = findLlamaServerBinary();
const logger = pino({ level: "silent" });
const llama = new LlamaRuntime(logger);
const children = new ChildRegistry();
const helpProbe = new HelpProbe();
const closing: Array<{ close(): Promise<void> }> = [];
let dataDir = "";
let demoPath = "";
let demoToolsPath = "";


function skipIfMissing(t: TestContext): boolean {
  if (binary !== null) return false;
  t.skip("llama-server not built: run npm run build:llama-server");
  return true;
}

async function serverEngine(modelPath: string, ctx: number, parallel: number): Promise<LlamaServerEngine> {
  const engine = new LlamaServerEngine("m", llamaModelConfig(modelPath, await freePort(), { ctx_size: ctx, parallel }), {
    binary: binary!,
    dataDir,
    logger,
    threads: 1,
    gpuLayers: 0,
    parallel,
    children,
    helpProbe,
  });
  closing.push(engine);
  return engine;
}

const echoTool: ToolSpec = { name: "echo", description: "Echo the text back", parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] } };
const addTool: ToolSpec = { name: "add", description: "Add two numbers", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } };

before(async () => {
  if (binary === null) {
    process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
    return;
  }
  dataDir = await mkdtemp(path.join(tmpdir(), "llama-server-tokens-"));
  [demoPath, demoToolsPath] = await Promise.all([ensureFixture("demo"), ensureFixture("demo", { toolMode: true })]);
});

after(async () => {
  await Promise.allSettled(closing.map((engine) => engine.close()));
  await llama.dispose();
  if (dataDir !== "") await rm(dataDir, { recursive: true, force: true });
});

describe("context budget on llama-server (real binary)", { concurrency: false }, () => {
  test("counts come from the server: its tokenizer, its chat template with the tools, a slot's context", async (t) => {
    if (skipIfMissing(t)) return;
    const engine = await serverEngine(demoToolsPath, 1024, 2);
    assert.equal(engine.contextLength(), null, "unknown before the server is asked");
    await engine.warmUp();
    assert.equal(engine.contextLength(), 512, "ctx_size 1024 over 2 slots");
    // The same GGUF tokenizer as node-llama-cpp's; special-token text counted as plain text on both.
    const embedded = new EmbeddedEngine("m", llamaModelConfig(demoToolsPath, 0, { engine: "embedded", ctx_size: 1024 }), { llama, logger, parallel: 1 });
    closing.push(embedded);
    for (const text of ["Hello world, hello", DEMO_SENTENCE, "<|im_start|>system\nplain text", "apple ".repeat(50)]) {
      assert.equal(await engine.countTokens(text), await embedded.countTokens(text), JSON.stringify(text));
    }
    assert.equal(await engine.countTokens(""), 0);
    const one = await engine.toolTokens([echoTool]);
    const two = await engine.toolTokens([echoTool, addTool]);
    // The template writes each tool's JSON plus its instructions around them.
    assert.ok(one > (await engine.countTokens(JSON.stringify(echoTool))), `one tool: ${one}`);
    assert.ok(two - one >= (await engine.countTokens(JSON.stringify(addTool.parameters))), `two tools: ${two}, one: ${one}`);
    assert.equal(await engine.toolTokens([]), 0);
  });

  test("a chat template without tools charges nothing for them (it renders none)", async (t) => {
    if (skipIfMissing(t)) return;
    const engine = await serverEngine(demoPath, 512, 1);
    await engine.warmUp();
    assert.equal(engine.contextLength(), 512);
    assert.equal(await engine.toolTokens([echoTool, addTool]), 0);
  });

  test("through the CLI: an input longer than a slot's context and tool schemas that leave no room are context_overflow", async (t) => {
    if (skipIfMissing(t)) return;
    const mcp = everythingServer();
    const yaml = [
      "llama:",
      `  binary: ${JSON.stringify(binary)}`,
      "  models:",
      "    default:",
      "      engine: llama-server",
      `      path: ${JSON.stringify(demoToolsPath)}`,
      `      port: ${await freePort()}`,
      "      threads: 1",
      "      ctx_size: 512",
      "      parallel: 2",
      "agents:",
      "  assistant:",
      "    temperature: 0",
      "    max_tokens: 32",
      "    tools: []",
      "  tooled:",
      "    temperature: 0",
      "    max_tokens: 32",
      "mcp:",
      "  servers:",
      "    everything:",
      `      command: ${JSON.stringify(mcp.command)}`,
      `      args: ${JSON.stringify(mcp.args)}`,
      "",
    ];
    const { dir, configPath } = await tempConfig(yaml.join("\n"));
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir });
    const long = await proc.request({ id: 1, method: "chat", params: { session_id: "big", input: "apple ".repeat(400) } }, 120_000);
    assert.equal(long.code, "context_overflow", JSON.stringify(long));
    assert.match(String(long.message), /^The input does not fit the context window: \d+ tokens for this turn, \d+ for the system prompt and tools, 224 available \(a context window of 256 tokens \(from ctx_size 512\) minus 32 kept for the reply\)/);
    const ok = await proc.request({ id: 2, method: "chat", params: { session_id: "small", input: "Hi" } }, 60_000);
    assert.equal((ok.result as { response?: string } | undefined)?.response, DEMO_SENTENCE, JSON.stringify(ok));
    const tooled = await proc.request({ id: 3, method: "chat", params: { agent: "tooled", input: "Hi" } }, 120_000);
    assert.equal(tooled.code, "context_overflow", JSON.stringify(tooled));
    assert.match(String(tooled.message), /the schemas of \d+ tools \(\d+ tokens\) leave no room .* narrow agents\.tooled\.tools/);
    assert.ok(Number((tooled.details as { tool_tokens: number }).tool_tokens) > 256, JSON.stringify(tooled.details));
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  });
});
