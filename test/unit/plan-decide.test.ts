// The plan decision with made-up models and machines: the numbers are simple enough to check by
// hand, and no node-llama-cpp is loaded.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decidePlan, type PlanRequest } from "../../src/engine/plan/decide-plan.js";
import type { ModelEstimator } from "../../src/engine/plan/estimator.js";
import { contextCandidates, suggestionCandidates } from "../../src/engine/plan/plan-search.js";
import type { Alternative } from "../../src/engine/plan/plan-alternatives.js";
import type { HardwareSnapshot } from "../../src/engine/plan/plan-types.js";
import { RuntimeError } from "../../src/shared/runtime-error.js";

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

interface FakeModel {
  blocks: number;
  /** Weights of one block; the output layer (the +1) holds `outputBytes`. */
  layerBytes: number;
  outputBytes: number;
  /** KV bytes per context token per block. */
  kvPerToken: number;
  /** Compute buffer: on the GPU when any layer is offloaded, else in RAM. */
  computeBytes: number;
  train?: number;
  parameters?: number;
}

/** A llama-like model whose memory grows linearly with offloaded layers and context. */
function fakeModel(model: FakeModel): ModelEstimator {
  const weightsBytes = model.blocks * model.layerBytes + model.outputBytes;
  const parameters = model.parameters ?? weightsBytes; // 8 bits per weight unless told
  return {
    facts: {
      architecture: "llama",
      parameters,
      quantization: "Q8_0",
      bitsPerWeight: (weightsBytes * 8) / parameters,
      trainContextSize: model.train,
      totalLayers: model.blocks + 1,
      weightsBytes,
    },
    weights: async (gpuLayers) => {
      const vramBytes = Math.min(gpuLayers, model.blocks) * model.layerBytes + (gpuLayers > model.blocks ? model.outputBytes : 0);
      return { ramBytes: weightsBytes - vramBytes, vramBytes };
    },
    context: async (ctxSize, gpuLayers) => {
      const kv = ctxSize * model.blocks * model.kvPerToken;
      const kvVram = ctxSize * Math.min(gpuLayers, model.blocks) * model.kvPerToken;
      return {
        kv: { ramBytes: kv - kvVram, vramBytes: kvVram },
        compute: gpuLayers > 0 ? { ramBytes: 0, vramBytes: model.computeBytes } : { ramBytes: model.computeBytes, vramBytes: 0 },
      };
    },
  };
}

/** 7B-class at Q8_0: 32 blocks of 200 MiB + 500 MiB output = 6.74 GiB; 128 KiB KV per token. */
const sevenB = (extra: Partial<FakeModel> = {}): ModelEstimator =>
  fakeModel({ blocks: 32, layerBytes: 200 * MiB, outputBytes: 500 * MiB, kvPerToken: 4 * 1024, computeBytes: 300 * MiB, train: 32768, parameters: 7.2e9, ...extra });

function machine(options: { ramFree: number; ramTotal?: number; vramFree?: number; backend?: "cuda" | false; unified?: boolean; mathCores?: number; logicalCores?: number }): HardwareSnapshot {
  const vram = options.vramFree ?? 0;
  const backend = options.backend ?? (vram > 0 ? "cuda" : false);
  return {
    ram: { totalBytes: options.ramTotal ?? options.ramFree + 2 * GiB, freeBytes: options.ramFree },
    gpu: { backend, devices: backend ? ["Test GPU"] : [], vram: { totalBytes: vram, freeBytes: vram }, unifiedBytes: options.unified ? vram : 0, probed: true },
    cpu: { logicalCores: options.logicalCores ?? 8, mathCores: options.mathCores ?? 4 },
    margins: { ramBytes: 1 * GiB, vramBytes: vram > 0 ? 512 * MiB : 0 },
  };
}

const request = (extra: Partial<PlanRequest> = {}): PlanRequest => ({ modelName: "default", gpuLayers: "auto", ctxSize: 4096, threads: "auto", ...extra });

async function planError(promise: Promise<unknown>): Promise<RuntimeError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RuntimeError, String(error));
    assert.equal(error.code, "model_plan_error");
    return error;
  }
  assert.fail("expected model_plan_error");
}

describe("decidePlan", () => {
  it("puts every layer on a GPU that holds the whole model", async () => {
    const plan = await decidePlan(sevenB(), machine({ ramFree: 16 * GiB, vramFree: 24 * GiB }), request());
    assert.equal(plan.gpuLayers, 33);
    assert.equal(plan.totalLayers, 33);
    assert.equal(plan.ctxSize, 4096);
    assert.equal(plan.estimates.weightsBytes, 32 * 200 * MiB + 500 * MiB);
    assert.equal(plan.estimates.kvCacheBytes, 4096 * 32 * 4096);
    assert.equal(plan.estimates.totalBytes, plan.estimates.weightsBytes + plan.estimates.kvCacheBytes + plan.estimates.computeBytes);
    assert.equal(plan.estimates.ramBytes, 0);
    assert.match(plan.reason, /^33\/33 layers on GPU: 6\.7 GiB weights \+ 512\.0 MiB KV at ctx 4096 \+ 300\.0 MiB compute = 7\.5 GiB of 24\.0 GiB free VRAM/);
    assert.deepEqual(plan.notes, []);
  });

  it("offloads as many layers as an 8 GiB GPU holds and says so, keeping the rest in RAM", async () => {
    const hardware = machine({ ramFree: 16 * GiB, vramFree: 8 * GiB });
    const plan = await decidePlan(sevenB(), hardware, request({ ctxSize: 16384 }));
    // Usable VRAM 7.5 GiB: 300 MiB compute + n * (200 MiB weights + 16384 * 4 KiB = 64 MiB KV) -> n = 27.
    assert.equal(plan.gpuLayers, 27);
    assert.equal(plan.ctxSize, 16384, "the configured context is kept; layers give way");
    assert.ok(plan.estimates.vramBytes <= 7.5 * GiB);
    assert.ok(plan.estimates.vramBytes + 264 * MiB > 7.5 * GiB, "one more layer would not fit");
    assert.match(plan.reason, /^27\/33 layers on GPU \(more would not fit\): .* of 8\.0 GiB free VRAM \(512\.0 MiB margin kept\); 1\.5 GiB of weights and .* in RAM/);
    assert.ok(plan.notes.some((note) => /all 33 layers would fit on the GPU with llama\.models\.default\.ctx_size 2048/.test(note)), plan.notes.join("\n"));
  });

  it("plans CPU only without a GPU backend, in words with the RAM numbers", async () => {
    const small = fakeModel({ blocks: 24, layerBytes: 16 * MiB, outputBytes: 20 * MiB, kvPerToken: 1024, computeBytes: 50 * MiB, train: 8192 });
    const plan = await decidePlan(small, machine({ ramFree: 21 * GiB }), request({ threads: "auto" }));
    assert.equal(plan.gpuLayers, 0);
    assert.equal(plan.threads, 3, "threads auto (embedded) = math cores - 1");
    assert.equal(plan.estimates.vramBytes, 0);
    assert.equal(plan.reason, "CPU only (no GPU backend): 404.0 MiB weights + 96.0 MiB KV at ctx 4096 + 50.0 MiB compute = 550.0 MiB fits in 21.0 GiB free RAM (1.0 GiB margin kept)");
  });

  it("ignores a fixed gpu_layers on a machine without a GPU, with a note", async () => {
    const plan = await decidePlan(sevenB(), machine({ ramFree: 16 * GiB }), request({ gpuLayers: 20 }));
    assert.equal(plan.gpuLayers, 0);
    assert.match(plan.notes.join("\n"), /gpu_layers is 20, but there is no GPU backend/);
  });

  it("honours a fixed gpu_layers even when more would fit", async () => {
    const plan = await decidePlan(sevenB(), machine({ ramFree: 16 * GiB, vramFree: 24 * GiB }), request({ gpuLayers: 10 }));
    assert.equal(plan.gpuLayers, 10);
    assert.match(plan.reason, /^10\/33 layers on GPU \(gpu_layers from the config\)/);
  });

  it("clamps a gpu_layers above the layer count to all layers", async () => {
    const plan = await decidePlan(sevenB(), machine({ ramFree: 16 * GiB, vramFree: 24 * GiB }), request({ gpuLayers: 999 }));
    assert.equal(plan.gpuLayers, 33);
    assert.match(plan.notes.join("\n"), /gpu_layers is 999; the model has 33 layers/);
  });

  it("caps the context at the trained length, with a note", async () => {
    const plan = await decidePlan(sevenB({ train: 2048 }), machine({ ramFree: 16 * GiB }), request({ ctxSize: 8192 }));
    assert.equal(plan.ctxSize, 2048);
    assert.match(plan.notes.join("\n"), /ctx_size 8192 is more than the model was trained on: using its 2048/);
  });

  it("reduces the context within bounds when the configured one does not fit", async () => {
    // CPU only, 10 GiB free: 6.8 GiB weights + 0.3 GiB compute leave ~1.9 GiB usable for KV = 15k tokens.
    const plan = await decidePlan(sevenB(), machine({ ramFree: 10 * GiB }), request({ ctxSize: 32768 }));
    assert.equal(plan.ctxSize, 8192);
    assert.match(plan.notes.join("\n"), /ctx_size reduced from 32768 to 8192 so the model fits/);
  });

  it("never reduces the context below 2048 on its own: smaller ones are only suggested", async () => {
    // 8.1 GiB free, 7.1 GiB usable: 6.8 GiB weights + 0.3 GiB compute leave about 0.05 GiB for KV.
    const error = await planError(decidePlan(sevenB(), machine({ ramFree: 8.1 * GiB }), request({ ctxSize: 4096 })));
    const alternatives = error.details?.alternatives as Alternative[];
    const ctx = alternatives.find((alt) => alt.kind === "ctx_size");
    assert.ok(ctx !== undefined && typeof ctx.value === "number" && ctx.value < 2048 && ctx.value >= 256, JSON.stringify(alternatives));
    assert.match(error.message, /set llama\.models\.default\.ctx_size to \d+/);
  });

  it("fails on a 2 GiB machine with the numbers and what would fit", async () => {
    const error = await planError(decidePlan(sevenB(), machine({ ramFree: 2 * GiB, ramTotal: 2 * GiB }), request()));
    assert.match(error.message, /^Model default does not fit on this machine at ctx_size 4096 \(no GPU backend: CPU only\) \(contexts down to 2048 were tried too\): it needs 6\.7 GiB weights \+ 512\.0 MiB KV at ctx 4096 \+ 300\.0 MiB compute; 7\.5 GiB of RAM needed, 1\.0 GiB usable \(2\.0 GiB free - 1\.0 GiB margin\)\./);
    const alternatives = error.details?.alternatives as Alternative[];
    const kinds = alternatives.map((alt) => alt.kind);
    assert.ok(kinds.includes("smaller_model"), kinds.join(","));
    assert.ok(!kinds.includes("free_memory"), "freeing memory cannot help: the machine has 2 GiB in all");
    assert.match(error.message, /What would fit: .*use a smaller model: up to about \d+M parameters at Q4_K_M fit/);
    assert.deepEqual(error.details?.needed, { ram_bytes: 6900 * MiB + 512 * MiB + 300 * MiB, vram_bytes: 0 });
  });

  it("suggests a smaller quantization when one would fit, and freeing memory when that would", async () => {
    const error = await planError(decidePlan(sevenB(), machine({ ramFree: 6 * GiB, ramTotal: 16 * GiB }), request()));
    const alternatives = error.details?.alternatives as Alternative[];
    const quant = alternatives.find((alt) => alt.kind === "quantization");
    // 5 GiB usable - KV/compute at 2048 (~556 MiB) = ~4.5 GiB for weights: Q4_K_M of 7.2B = ~4.1 GiB.
    assert.equal(quant?.value, "Q4_K_M");
    const free = alternatives.find((alt) => alt.kind === "free_memory");
    assert.ok(free !== undefined && typeof free.value === "number" && free.value > 2 * GiB);
    assert.match(error.message, /use a Q4_K_M quantization of this model \(~4\.1 GiB of weights instead of 6\.7 GiB\) with llama\.models\.default\.ctx_size 2048/);
  });

  it("names the gpu_layers that would fit when a fixed count overflows VRAM", async () => {
    const error = await planError(decidePlan(sevenB(), machine({ ramFree: 3 * GiB, vramFree: 6 * GiB }), request({ gpuLayers: 33 })));
    assert.match(error.message, /7\.5 GiB of VRAM needed, 5\.5 GiB usable \(6\.0 GiB free - 512\.0 MiB margin\)/);
    const layers = (error.details?.alternatives as Alternative[]).find((alt) => alt.kind === "gpu_layers");
    assert.ok(layers !== undefined && typeof layers.value === "number" && layers.value < 33 && layers.value > 0, JSON.stringify(error.details));
  });

  it("counts GPU memory against RAM on unified-memory machines", async () => {
    const hardware = machine({ ramFree: 4 * GiB, vramFree: 12 * GiB, unified: true });
    await planError(decidePlan(sevenB(), hardware, request()));
    const split = machine({ ramFree: 4 * GiB, vramFree: 12 * GiB });
    assert.equal((await decidePlan(sevenB(), split, request())).gpuLayers, 33, "a discrete GPU leaves RAM free");
  });

  it("resolves threads: auto per engine (embedded: cores - 1, llama-server: cores; cores = math cores, else half the logical); a fixed count is kept", async () => {
    const model = sevenB();
    assert.equal((await decidePlan(model, machine({ ramFree: 16 * GiB, mathCores: 0, logicalCores: 8 }), request())).threads, 3);
    assert.equal((await decidePlan(model, machine({ ramFree: 16 * GiB, mathCores: 0, logicalCores: 8 }), request({ engine: "llama-server" }))).threads, 4);
    assert.equal((await decidePlan(model, machine({ ramFree: 16 * GiB, mathCores: 2, logicalCores: 2 }), request())).threads, 1);
    assert.equal((await decidePlan(model, machine({ ramFree: 16 * GiB, mathCores: 0, logicalCores: 1 }), request())).threads, 1);
    const fixed = await decidePlan(model, machine({ ramFree: 16 * GiB, logicalCores: 2 }), request({ threads: 6 }));
    assert.equal(fixed.threads, 6);
    assert.match(fixed.notes.join("\n"), /threads 6 is more than the 2 logical cores/);
  });

  it("says how many sequences share the context", async () => {
    const plan = await decidePlan(sevenB(), machine({ ramFree: 16 * GiB }), request({ sequences: 2 }));
    assert.match(plan.reason, /KV at ctx 4096 x 2 sequences/);
    const server = await decidePlan(sevenB(), machine({ ramFree: 16 * GiB }), request({ sequences: 2, sharedContext: true }));
    assert.match(server.reason, /KV at ctx 4096 shared by 2 slots/);
  });
});

describe("context candidates", () => {
  it("tries the request, then powers of two down to 2048", () => {
    assert.deepEqual(contextCandidates(32768), [32768, 16384, 8192, 4096, 2048]);
    assert.deepEqual(contextCandidates(5000), [5000, 4096, 2048]);
    assert.deepEqual(contextCandidates(2048), [2048]);
    assert.deepEqual(contextCandidates(1000), [1000]);
  });

  it("suggests powers of two below the floor down to 256", () => {
    assert.deepEqual(suggestionCandidates(2048), [1024, 512, 256]);
    assert.deepEqual(suggestionCandidates(1000), [512, 256]);
  });
});
