// A llama-server model and an embedded model under one memory budget that fits either, not
// both (built CLI, real llama-server): the scheduler stops the child when it evicts the model,
// starts it again when asked, and no child is left behind.
import assert from "node:assert/strict";
import { rm, writeFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { freePort } from "../helpers/free-port.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { processesOnPort } from "../helpers/llama-server-procs.js";
import { tempConfig } from "../helpers/temp-config.js";

const binary = findLlamaServerBinary();
if (binary === null) process.stderr.write(LLAMA_SERVER_MISSING_MESSAGE);
const skip = binary === null ? "llama-server not built: npm run build:llama-server" : false;
const LOAD_MS = 90_000;

describe("scheduler: llama-server and embedded models under one budget (built CLI, real llama-server)", { skip }, () => {
  let tiny = "";
  let port = 0;
  const dirs: string[] = [];
  const procs: CliProcess[] = [];
  const yaml = (budget: number): string =>
    configYaml({
      app: { data_dir: "./data", log_level: "info" },
      llama: {
        binary,
        memory_budget: { ram: budget, vram: 0 },
        models: {
          server: localModel(tiny, { engine: "llama-server", port, ctx_size: 1024, parallel: 1, gpu_layers: 0 }),
          inproc: localModel(tiny, { ctx_size: 1024, parallel: 1, gpu_layers: 0 }),
        },
      },
      agents: { s: { model: "server", temperature: 0, max_tokens: 4, memory: false }, e: { model: "inproc", temperature: 0, max_tokens: 4, memory: false } },
    });
  const serve = async (text: string): Promise<CliProcess> => {
    const { dir, configPath } = await tempConfig();
    dirs.push(dir);
    await writeFile(configPath, text);
    const proc = new CliProcess(["serve-stdio", "--config", configPath], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "info" } });
    procs.push(proc);
    return proc;
  };
  const chat = async (proc: CliProcess, id: string, agent: string): Promise<void> => {
    const reply = await proc.request({ id, method: "chat", params: { agent, input: "hello" } }, LOAD_MS);
    assert.equal(reply.type, "result", `${id}: ${JSON.stringify(reply)}; ${proc.stderr.slice(-1500)}`);
  };
  const memoryOf = async (proc: CliProcess, id: string): Promise<Record<string, { status: string; ram: number }>> => {
    const reply = await proc.request({ id, method: "ps" }, LOAD_MS);
    const models = (reply.result as { models: Array<{ name: string; status: string; memory: { ram_bytes: number } }> }).models;
    return Object.fromEntries(models.map((model) => [model.name, { status: model.status, ram: model.memory.ram_bytes }]));
  };
  const stop = async (proc: CliProcess): Promise<void> => {
    proc.send({ id: "bye", method: "shutdown" });
    assert.equal((await proc.exited).code, 0);
    assert.deepEqual(protocolViolations(proc), []);
  };

  before(async () => {
    [tiny, port] = await Promise.all([ensureFixture("tiny", { seed: 3 }), freePort()]);
  });
  after(async () => {
    for (const proc of procs) proc.kill("SIGKILL");
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("evicting the llama-server model stops its child; asking for it again starts one; nothing is orphaned", async () => {
    // What each counts for once loaded (llama-server: the child's resident RAM, measured).
    const probe = await serve(yaml(1024 ** 4));
    await chat(probe, "p1", "s");
    await chat(probe, "p2", "e");
    const measured = await memoryOf(probe, "p3");
    await stop(probe);
    assert.deepEqual(await processesOnPort(port), [], "the probe's child stopped with it");
    const [server, inproc] = [measured.server?.ram ?? 0, measured.inproc?.ram ?? 0];
    assert.ok(server > 0 && inproc > 0, JSON.stringify(measured));
    // Either fits alone, not both.
    const budget = Math.max(server, inproc) + Math.floor(Math.min(server, inproc) / 2);

    const proc = await serve(yaml(budget));
    await chat(proc, "s1", "s");
    assert.equal((await processesOnPort(port)).filter((entry) => !entry.watchdog).length, 1, "the llama-server child runs");
    await chat(proc, "e1", "e");
    assert.deepEqual(await processesOnPort(port), [], "evicted for the embedded model: its child (and watchdog) stopped");
    let state = await memoryOf(proc, "ps1");
    assert.deepEqual([state.server?.status, state.inproc?.status], ["unloaded", "loaded"]);
    await chat(proc, "s2", "s");
    assert.equal((await processesOnPort(port)).filter((entry) => !entry.watchdog).length, 1, "started again");
    state = await memoryOf(proc, "ps2");
    assert.deepEqual([state.server?.status, state.inproc?.status], ["loaded", "unloaded"]);
    const evictions = proc.stderr.split("\n").filter((line) => line.includes('"msg":"model unloaded"') && line.includes("making room for")).map((line) => (JSON.parse(line) as { model: string }).model);
    assert.deepEqual(evictions, ["server", "inproc"]);
    await stop(proc);
    assert.deepEqual(await processesOnPort(port), [], "no child left after the shutdown");
  });
});
