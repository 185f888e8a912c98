// The doctor checks that need node-llama-cpp or /proc: GPU and engine, per-model plan verdicts,
// and stale llama-server processes (against a made-up /proc).
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { configSchema, type Config } from "../../src/config/schema.js";
import { checkGpu } from "../../src/diagnostics/checks/gpu.js";
import { checkModelInsights } from "../../src/diagnostics/checks/model-insights.js";
import { downloadSettingsOf } from "../../src/models/download-settings.js";
import { checkStaleLlamaServers, portOf } from "../../src/diagnostics/checks/stale-llama-server.js";
import type { CheckResult } from "../../src/diagnostics/doctor-report.js";
import { runDoctor } from "../../src/diagnostics/run-doctor.js";
import { lazyLlama, type LlamaHandle, type LlamaLoader } from "../../src/engine/llama/llama-loader.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { writeEditedTinyModel } from "../helpers/plan-fixtures.js";

const GiB = 1024 ** 3;

/** Just the Llama members the GPU check reads. */
function fakeLlama(gpu: "cuda" | false, devices: string[] = [], vram = { total: 0, free: 0, unifiedSize: 0 }): LlamaLoader {
  const llama = {
    gpu,
    supportsGpuOffloading: gpu !== false,
    buildType: "prebuilt",
    llamaCppRelease: { repo: "ggml-org/llama.cpp", release: "b9999" },
    systemInfo: "CPU : AVX2 = 1 |",
    cpuMathCores: 8,
    getGpuDeviceNames: async () => devices,
    getVramState: async () => ({ ...vram, used: vram.total - vram.free }),
  };
  return async () => ({ module: {}, llama }) as unknown as LlamaHandle;
}

const byId = (results: CheckResult[], id: string): CheckResult => {
  const found = results.find((result) => result.id === id);
  assert.ok(found, `${id} in ${results.map((result) => result.id).join(", ")}`);
  return found;
};

describe("gpu check", () => {
  it("names the backend, each device and the VRAM", async () => {
    const results = await checkGpu(fakeLlama("cuda", ["NVIDIA H200"], { total: 140 * GiB, free: 139 * GiB, unifiedSize: 0 }));
    const gpu = byId(results, "gpu");
    assert.equal(gpu.status, "ok");
    assert.equal(gpu.finding, "cuda on NVIDIA H200: 139.0 GiB free of 140.0 GiB VRAM");
    assert.deepEqual(gpu.data?.devices, ["NVIDIA H200"]);
    const engine = byId(results, "node_llama_cpp");
    assert.match(engine.finding, /^node-llama-cpp \d+\.\d+\.\d+, prebuilt llama\.cpp binary \(b9999\), backend cuda$/);
  });

  it("is ok with a note on a CPU-only machine", async () => {
    const gpu = byId(await checkGpu(fakeLlama(false)), "gpu");
    assert.equal(gpu.status, "ok");
    assert.match(gpu.finding, /^CPU only: no CUDA, Vulkan or Metal device found; models run on the CPU \(8 math cores\)/);
  });

  it("fails with a fix when node-llama-cpp cannot start", async () => {
    const results = await checkGpu(() => Promise.reject(new Error("no prebuilt binary for this platform\nmore")));
    assert.equal(results.length, 1);
    assert.equal(results[0]?.status, "fail");
    assert.match(results[0]?.finding ?? "", /cannot start: no prebuilt binary for this platform$/);
    assert.match(results[0]?.fix ?? "", /npm ci/);
  });
});

describe("model plan checks (real node-llama-cpp)", () => {
  let dir = "";
  const llama = lazyLlama({});
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "doctor-plan-"));
  });
  after(async () => {
    await llama.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("reports what each GGUF is and its plan; a malformed one fails; an unreadable one is left to model.<name>", async () => {
    const tiny = await ensureFixture("tiny");
    const broken = await writeEditedTinyModel(path.join(dir, "no-ffn.gguf"), (meta) => delete meta["llama.feed_forward_length"]);
    const config = configSchema.parse({
      llama: {
        models: {
          good: { path: tiny, threads: 2 },
          broken: { path: broken },
          absent: { path: path.join(dir, "absent.gguf") },
          remote: { engine: "openai", base_url: "http://127.0.0.1:8000/v1" },
        },
      },
    });
    const results = await checkModelInsights(config, { llama: llama.get, env: process.env, settings: downloadSettingsOf(config, process.env) });
    assert.deepEqual(results.map((result) => result.id), ["model.good.plan", "model.broken.plan", "memory.budget"]);
    const good = byId(results, "model.good.plan");
    assert.equal(good.status, "ok");
    assert.match(good.finding, /^llama, 190K params, F16, trained ctx 2048; CPU only/);
    assert.equal(good.data?.ctx_size, 2048);
    const bad = byId(results, "model.broken.plan");
    assert.equal(bad.status, "fail");
    assert.match(bad.finding, /llama\.feed_forward_length is missing/);
    assert.match(bad.fix ?? "", /llama\.models\.broken\.path/);
  });

  it("puts a plan error's numbers in the finding and what would fit in the fix", async () => {
    const bench = await ensureFixture("bench", { shape: "small" });
    const config: Config = configSchema.parse({ llama: { models: { big: { path: bench } } } });
    const MiB = 1024 ** 2;
    const hardware = {
      ram: { totalBytes: 160 * MiB, freeBytes: 160 * MiB },
      gpu: { backend: false as const, devices: [], vram: { totalBytes: 0, freeBytes: 0 }, unifiedBytes: 0, probed: true },
      cpu: { logicalCores: 2, mathCores: 2 },
      margins: { ramBytes: 16 * MiB, vramBytes: 0 },
    };
    const results = await checkModelInsights(config, { llama: llama.get, env: process.env, settings: downloadSettingsOf(config, process.env), hardware });
    const big = byId(results, "model.big.plan");
    assert.equal(big.status, "fail");
    assert.match(big.finding, /^llama, 84M params, Q8_0, trained ctx 8192; Model big does not fit on this machine .* 144\.0 MiB usable \(160\.0 MiB free - 16\.0 MiB margin\)\.$/);
    assert.match(big.fix ?? "", /^what would fit: use a Q5_K_M quantization of this model/);
    assert.equal(big.data?.code, "model_plan_error");
  });

  it("shows the memory budget (configured or auto) and what the planned models need of it", async () => {
    const tiny = await ensureFixture("tiny");
    const MiB = 1024 ** 2;
    const roomy = configSchema.parse({ llama: { memory_budget: { ram: "512MiB", vram: 0 }, models: { one: { path: tiny, gpu_layers: 0 }, two: { path: tiny, gpu_layers: 0 } } } });
    const results = await checkModelInsights(roomy, { llama: llama.get, env: process.env, settings: downloadSettingsOf(roomy, process.env) });
    const budget = byId(results, "memory.budget");
    assert.equal(budget.status, "ok", budget.finding);
    assert.match(budget.finding, /^RAM 512\.0 MiB \(configured\), VRAM 0 B \(configured\); the 2 local models need .* RAM and 0 B VRAM together: all can be loaded at once$/);
    assert.equal(budget.data?.ram_bytes, 512 * MiB);
    assert.deepEqual(budget.data?.ram, { setting: "configured" });
    assert.equal(budget.data?.all_fit, true);
    const one = (budget.data?.models as Record<string, { ram_bytes: number }>).one;
    assert.ok(one !== undefined && one.ram_bytes > 0, JSON.stringify(budget.data));

    // auto RAM: what is free less the margin; a budget smaller than one model fails before any load.
    const tight = configSchema.parse({ llama: { memory_budget: { ram: "auto", vram: 1 }, models: { one: { path: tiny, gpu_layers: 0 } } } });
    const auto = byId(await checkModelInsights(tight, { llama: llama.get, env: process.env, settings: downloadSettingsOf(tight, process.env) }), "memory.budget");
    assert.match(auto.finding, /^RAM .* \(auto: .* free less .* margin\), VRAM 1 B \(configured\)/);
    assert.equal((auto.data?.ram as { setting: string }).setting, "auto");
    const small = configSchema.parse({ llama: { memory_budget: { ram: 1024, vram: 0 }, models: { one: { path: tiny, gpu_layers: 0 } } } });
    const refused = byId(await checkModelInsights(small, { llama: llama.get, env: process.env, settings: downloadSettingsOf(small, process.env) }), "memory.budget");
    assert.equal(refused.status, "fail");
    assert.match(refused.finding, /more than the whole budget: one \(.* RAM, 0 B VRAM\), refused with model_too_large at first use$/);
    assert.match(refused.fix ?? "", /raise llama\.memory_budget/);
  });

  it("runs in runDoctor next to the other checks, sharing one node-llama-cpp", async () => {
    const tiny = await ensureFixture("tiny");
    const yaml = configSchema.parse({ llama: { models: { default: { path: tiny } } }, http: { port: 18099 } });
    const report = await runDoctor({ configState: { status: "loaded", path: path.join(dir, "c.yaml"), source: "flag", config: yaml }, version: "0.0.0", env: process.env }, { llama: llama.get });
    const ids = report.checks.map((check) => check.id);
    assert.ok(ids.indexOf("gpu") > ids.indexOf("system.node") && ids.indexOf("gpu") < ids.indexOf("config"), ids.join(", "));
    assert.equal(byId(report.checks, "model.default.plan").status, "ok");
    assert.ok(!ids.includes("llama_server.processes"), "no process check without a llama-server model");
  });
});

describe("stale llama-server check", () => {
  let proc = "";
  const config = configSchema.parse({
    llama: { models: { srv: { engine: "llama-server", path: "/m.gguf", port: 8081 }, other: { engine: "llama-server", path: "/m.gguf", port: 8082 } } },
  });

  async function fakeProcess(pid: number, ppid: number, argv: string[]): Promise<void> {
    await mkdir(path.join(proc, String(pid)), { recursive: true });
    await writeFile(path.join(proc, String(pid), "cmdline"), `${argv.join("\0")}\0`);
    await writeFile(path.join(proc, String(pid), "stat"), `${pid} (${path.basename(argv[0] ?? "x")} x) S ${ppid} ${pid} ${pid} 0 -1`);
  }

  before(async () => {
    proc = await mkdtemp(path.join(tmpdir(), "fake-proc-"));
    await fakeProcess(1, 0, ["/sbin/init"]);
    await fakeProcess(500, 1, ["/opt/llama/llama-server", "-m", "/m.gguf", "--port", "8081"]);
    await fakeProcess(600, 700, ["/opt/llama/llama-server", "--port=8082", "-m", "/m.gguf"]);
    await fakeProcess(700, 1, ["node", "/srv/local-ai/dist/src/cli/main.js", "serve-http"]);
    await fakeProcess(800, 1, ["/opt/llama/llama-server", "--port", "9999"]);
    await fakeProcess(900, 1, ["vim", "llama-server", "--port", "8081"]);
    await mkdir(path.join(proc, "self"), { recursive: true });
  });
  after(async () => {
    await rm(proc, { recursive: true, force: true });
  });

  it("warns about an orphan on our port with `kill <pid>`, and names the parent of one that has one", async () => {
    const results = await checkStaleLlamaServers(config, { procRoot: proc, selfPid: 4242 });
    assert.deepEqual(results.map((result) => result.id), ["llama_server.processes.500", "llama_server.processes.600"]);
    const orphan = results[0];
    assert.equal(orphan?.status, "warn");
    assert.match(orphan?.finding ?? "", /^llama-server pid 500 holds port 8081 of model srv and its parent is gone/);
    assert.equal(orphan?.fix, "kill 500 (local-ai also reaps its own stale child on start)");
    const owned = results[1];
    assert.equal(owned?.status, "warn");
    assert.match(owned?.finding ?? "", /started by pid 700 \(node \/srv\/local-ai\/dist\/src\/cli\/main\.js serve-http\)/);
    assert.match(owned?.fix ?? "", /if pid 700 is not a local-ai you are running, kill 600; or set llama\.models\.other\.port/);
  });

  it("is ok for our own child, and when nothing holds our ports", async () => {
    const own = await checkStaleLlamaServers(config, { procRoot: proc, selfPid: 700 });
    assert.equal(own.find((result) => result.id === "llama_server.processes.600")?.status, "ok");
    const quiet = configSchema.parse({ llama: { models: { srv: { engine: "llama-server", path: "/m.gguf", port: 8090 } } } });
    const none = await checkStaleLlamaServers(quiet, { procRoot: proc });
    assert.deepEqual(none.map((result) => [result.id, result.status]), [["llama_server.processes", "ok"]]);
    assert.deepEqual(await checkStaleLlamaServers(configSchema.parse({}), { procRoot: proc }), [], "nothing to check without llama-server models");
  });

  it("reads --port in both spellings and llama-server's default", () => {
    assert.equal(portOf(["llama-server", "--port", "81"]), 81);
    assert.equal(portOf(["llama-server", "--port=82"]), 82);
    assert.equal(portOf(["llama-server", "-m", "x"]), 8080);
    assert.equal(portOf(["llama-server", "--port", "x"]), null);
  });
});
