// planModels end to end in process: real GGUF fixtures, real node-llama-cpp estimates (CPU), and
// injected machines where the real one cannot show a case.
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { configSchema, type Config } from "../../src/config/schema.js";
import { lazyLlama } from "../../src/engine/llama/llama-loader.js";
import { planModels } from "../../src/engine/plan/plan-models.js";
import type { HardwareSnapshot } from "../../src/engine/plan/plan-types.js";
import { renderPlan } from "../../src/engine/plan/render-plan.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { writeEditedTinyModel } from "../helpers/plan-fixtures.js";

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
// One node-llama-cpp for the whole file (it takes a second or more to load).
const llama = lazyLlama({});

function config(models: Record<string, unknown>, binary = "llama-server"): Config {
  return configSchema.parse({ llama: { binary, models } });
}

const smallMachine = (ramFree: number): HardwareSnapshot => ({
  ram: { totalBytes: ramFree, freeBytes: ramFree },
  gpu: { backend: false, devices: [], vram: { totalBytes: 0, freeBytes: 0 }, unifiedBytes: 0, probed: true },
  cpu: { logicalCores: 2, mathCores: 2 },
  margins: { ramBytes: 16 * MiB, vramBytes: 0 },
});

describe("planModels", () => {
  let dir = "";
  let tiny = "";
  let bench = "";
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "plan-models-"));
    [tiny, bench] = await Promise.all([ensureFixture("tiny"), ensureFixture("bench", { shape: "small" })]);
  });
  after(async () => {
    await llama.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("plans the tiny model on this machine with node-llama-cpp's estimates", async () => {
    const report = await planModels(config({ default: { path: tiny, parallel: 1, threads: 2 } }), { llama: llama.get });
    assert.equal(report.ok, true, JSON.stringify(report.models));
    const [entry] = report.models;
    assert.equal(entry?.status, "ok");
    assert.equal(entry?.model?.architecture, "llama");
    assert.equal(entry?.model?.quantization, "F16");
    assert.equal(entry?.model?.trainContextSize, 2048);
    const plan = entry?.plan;
    assert.ok(plan);
    assert.equal(plan.ctxSize, 2048, "4096 capped at the trained 2048");
    assert.equal(plan.threads, 2);
    assert.equal(plan.totalLayers, 3);
    assert.equal(plan.estimates.weightsBytes, entry?.model?.weightsBytes);
    // 2 blocks x 2048 cells x (2 kv heads x 16 dims) x K and V x 2 bytes
    assert.equal(plan.estimates.kvCacheBytes, 2 * 2048 * 32 * 2 * 2);
    assert.ok(plan.estimates.computeBytes > 0);
    assert.match(plan.reason, /fits in .* free RAM/);
    assert.equal(plan.command, undefined, "embedded models have no command line");
    assert.ok(report.hardware.cpu.mathCores > 0);
    assert.match(report.hardware.summary, /cores/);
  });

  it("fails a model that does not fit an injected 160 MiB machine, listing what would fit", async () => {
    const report = await planModels(config({ bench: { path: bench } }), { llama: llama.get, hardware: smallMachine(160 * MiB) });
    assert.equal(report.ok, false);
    const error = report.models[0]?.error;
    assert.equal(error?.code, "model_plan_error");
    assert.match(error?.message ?? "", /Model bench does not fit on this machine at ctx_size 4096 .* of RAM needed, 144\.0 MiB usable \(160\.0 MiB free - 16\.0 MiB margin\)\. What would fit: use a Q5_K_M quantization of this model \(~57\.1 MiB of weights instead of 85\.1 MiB\) with llama\.models\.bench\.ctx_size 2048\.$/);
    const kinds = (error?.details?.alternatives as Array<{ kind: string }>).map((alt) => alt.kind);
    assert.deepEqual(kinds, ["quantization"]);
    assert.equal(report.models[0]?.model?.quantization, "Q8_0", "a failed plan still says what the model is");
  });

  it("refuses a GGUF without feed_forward_length without loading it (the process survives)", async () => {
    const file = await writeEditedTinyModel(path.join(dir, "no-ffn.gguf"), (meta) => delete meta["llama.feed_forward_length"]);
    const report = await planModels(config({ broken: { path: file } }), { llama: llama.get });
    const error = report.models[0]?.error;
    assert.equal(error?.code, "model_missing");
    assert.match(error?.message ?? "", /llama\.models\.broken\.path: .* llama\.feed_forward_length is missing/);
    assert.equal(error?.details?.config_key, "llama.models.broken.path");
  });

  it("answers model_missing for a missing file and binary_missing for a llama-server without its binary", async () => {
    const report = await planModels(
      config({ gone: { path: path.join(dir, "absent.gguf") }, server: { engine: "llama-server", path: tiny, port: 8199 } }, path.join(dir, "no-such-llama-server")),
      { llama: llama.get },
    );
    assert.deepEqual(report.models.map((entry) => entry.error?.code), ["model_missing", "binary_missing"]);
    assert.match(report.models[1]?.error?.message ?? "", /llama\.binary: .*no-such-llama-server does not exist/);
  });

  it("shows the llama-server command line from the engine's own builder, with the key hidden", async () => {
    const binary = path.join(dir, "llama-server");
    const help = ["-m,    --model FNAME   model", "--host HOST   host", "--port PORT   port", "-c,    --ctx-size N   ctx", "-ngl,  --n-gpu-layers N   layers", "-np,   --parallel N   slots", "-t,    --threads N   threads", "--api-key KEY   key", "--jinja   templates"];
    await writeFile(binary, `#!/bin/sh\ncat <<'EOF'\n${help.join("\n")}\nEOF\n`);
    await chmod(binary, 0o755);
    const report = await planModels(config({ server: { engine: "llama-server", path: tiny, port: 8199, parallel: 2, threads: 2, extra_args: ["--temp", "0"] } }, binary), { llama: llama.get });
    const plan = report.models[0]?.plan;
    assert.deepEqual(plan?.command, [binary, "-m", tiny, "--host", "127.0.0.1", "--port", "8199", "-c", "2048", "-ngl", "0", "--parallel", "2", "-t", "2", "--api-key", "<per-launch key>", "--jinja", "--temp", "0"]);
    assert.match(plan?.reason ?? "", /KV at ctx 2048 shared by 2 slots/);
    const text = renderPlan(report, { color: false });
    assert.match(text, /command: .*llama-server -m .* --api-key '<per-launch key>' --jinja --temp 0\n/);
  });

  it("reports openai models as remote, with no local plan and no node-llama-cpp", async () => {
    const report = await planModels(config({ cloud: { engine: "openai", base_url: "http://127.0.0.1:8000/v1", model: "qwen" } }), {
      llama: () => Promise.reject(new Error("must not be loaded")),
    });
    assert.equal(report.ok, true);
    assert.deepEqual(report.models[0]?.remote, { baseUrl: "http://127.0.0.1:8000/v1", model: "qwen", summary: "remote: http://127.0.0.1:8000/v1, model qwen" });
    assert.equal(report.hardware.gpu.probed, false);
  });

  it("refuses an unknown model name with invalid_params listing the known ones", async () => {
    await assert.rejects(planModels(config({ a: { path: tiny }, b: { path: tiny } }), { model: "c" }), (error: unknown) => {
      assert.ok(error instanceof RuntimeError);
      assert.equal(error.code, "invalid_params");
      assert.match(error.message, /Unknown model "c"; configured models: a, b/);
      return true;
    });
  });

  it("notes when several models fit one at a time but not together", async () => {
    const report = await planModels(config({ one: { path: bench, parallel: 1 }, two: { path: bench, parallel: 1 } }), {
      llama: llama.get,
      hardware: smallMachine(250 * MiB),
    });
    assert.equal(report.ok, true, JSON.stringify(report.models.map((entry) => entry.error?.message)));
    assert.match(report.notes.join("\n"), /the 2 local models together need .* of RAM, .* is usable: they fit one at a time/);
    assert.ok(GiB > 0);
  });
});
