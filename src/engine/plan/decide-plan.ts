import { estimateUsage, ramOf, sum, vramOf, type ModelEstimator, type Usage } from "./estimator.js";
import { driverOf } from "../drivers/engine-drivers.js";
import type { EngineKind } from "../../config/engine-kinds.js";
import { fits, hasGpu } from "./memory-fit.js";
import { contextLabel, describePlan, type LayerChoice } from "./describe-plan.js";
import { planError } from "./plan-alternatives.js";
import { bestAtContext, contextCandidates } from "./plan-search.js";
import type { HardwareSnapshot, PlanEstimates } from "./plan-types.js";

/** What the config asks for one model (its `gpu_layers`, `ctx_size`, `threads`). */
export interface PlanRequest {
  /** The key under llama.models, for messages that name the setting to change. */
  modelName: string;
  gpuLayers: "auto" | number;
  ctxSize: number;
  threads: "auto" | number;
  /** `threads: auto` differs per engine (its driver's `local.threads`). */
  engine?: EngineKind;
  /** For the words only (the estimator already sizes the KV cache for them): see contextLabel. */
  sequences?: number;
  sharedContext?: boolean;
}

export interface PlanDecision {
  gpuLayers: number;
  totalLayers: number;
  ctxSize: number;
  threads: number;
  usage: Usage;
  estimates: PlanEstimates;
  reason: string;
  notes: string[];
}

/**
 * Picks GPU layers and context size for one model on one machine, or throws model_plan_error
 * saying what would fit. Pure: the machine and the model come in as numbers.
 *
 * Order of preference: the configured context size is a functional promise to the user (longer
 * chats), offload is only speed, so with `gpu_layers: auto` layers give way first; the context is
 * reduced (never below MIN_USEFUL_CTX) only when even the fewest layers cannot hold it. A fixed
 * `gpu_layers` is never changed, except on a machine without a GPU backend, where it means nothing.
 */
export async function decidePlan(estimator: ModelEstimator, hardware: HardwareSnapshot, request: PlanRequest): Promise<PlanDecision> {
  const { facts } = estimator;
  const notes: string[] = [];
  const key = `llama.models.${request.modelName}`;
  const gpu = hasGpu(hardware);
  const label = contextLabel(request.sequences ?? 1, request.sharedContext ?? false);

  let layers: "auto" | number = request.gpuLayers;
  if (!gpu) {
    if (typeof layers === "number" && layers > 0) notes.push(`${key}.gpu_layers is ${layers}, but there is no GPU backend: the model runs on the CPU`);
    layers = 0;
  } else if (typeof layers === "number" && layers > facts.totalLayers) {
    notes.push(`${key}.gpu_layers is ${layers}; the model has ${facts.totalLayers} layers, so all of them are offloaded`);
    layers = facts.totalLayers;
  }

  // Past the trained length, attention degrades (node-llama-cpp's "auto" context stops there too).
  let cap = request.ctxSize;
  if (facts.trainContextSize !== undefined && facts.trainContextSize > 0 && cap > facts.trainContextSize) {
    cap = facts.trainContextSize;
    notes.push(`${key}.ctx_size ${request.ctxSize} is more than the model was trained on: using its ${cap}`);
  }

  let chosen: Usage | undefined;
  for (const ctxSize of contextCandidates(cap)) {
    const attempt = await bestAtContext(estimator, hardware, ctxSize, layers);
    if (attempt.fits) {
      chosen = attempt.usage;
      break;
    }
  }
  if (chosen === undefined) throw await planError(estimator, hardware, { modelName: request.modelName, layers, ctxSize: cap, label });

  if (chosen.ctxSize < cap) notes.push(`${key}.ctx_size reduced from ${cap} to ${chosen.ctxSize} so the model fits`);
  if (layers === "auto" && gpu && chosen.gpuLayers < facts.totalLayers) {
    const hint = await fullOffloadHint(estimator, hardware, chosen.ctxSize);
    if (hint !== undefined) notes.push(`all ${facts.totalLayers} layers would fit on the GPU with ${key}.ctx_size ${hint} (faster, shorter context)`);
  }

  const threads = resolveThreads(request.threads, hardware, notes, key, request.engine ?? "embedded");
  const choice: LayerChoice = !gpu
    ? { kind: "no_gpu" }
    : layers === "auto"
      ? { kind: chosen.gpuLayers === facts.totalLayers ? "all" : chosen.gpuLayers === 0 ? "none_fit" : "vram_limited" }
      : { kind: "configured" };
  return {
    gpuLayers: chosen.gpuLayers,
    totalLayers: facts.totalLayers,
    ctxSize: chosen.ctxSize,
    threads,
    usage: chosen,
    estimates: toEstimates(chosen),
    reason: describePlan(chosen, hardware, facts.totalLayers, choice, label),
    notes,
  };
}

/**
 * `threads: auto` from node-llama-cpp's `cpuMathCores` (llama.cpp's count of physical performance
 * cores: hyper-threads and efficiency cores slow token generation down; when unknown, half the
 * logical cores), adjusted per engine by its driver (`local.threads`), exactly as the engines resolve it. A
 * llama-server launch counts them without node-llama-cpp (physicalCores): its figure is used
 * for llama-server plans, so the plan's `-t` is the launched one.
 */
export function resolveThreads(requested: "auto" | number, hardware: HardwareSnapshot, notes: string[], key: string, engine: EngineKind = "embedded"): number {
  if (requested !== "auto") {
    if (requested > hardware.cpu.logicalCores && hardware.cpu.logicalCores > 0) {
      notes.push(`${key}.threads ${requested} is more than the ${hardware.cpu.logicalCores} logical cores: threads will compete (slower)`);
    }
    return requested;
  }
  const policy = driverOf(engine).local?.threads;
  const server = policy?.cores === "physical" ? hardware.cpu.serverCores : undefined;
  const cores = server !== undefined && server > 0 ? server : hardware.cpu.mathCores > 0 ? hardware.cpu.mathCores : Math.max(1, Math.floor(hardware.cpu.logicalCores / 2));
  return policy?.auto(cores) ?? cores;
}

/** The largest smaller context at which every layer fits on the GPU, if any. */
async function fullOffloadHint(estimator: ModelEstimator, hardware: HardwareSnapshot, below: number): Promise<number | undefined> {
  for (const ctxSize of contextCandidates(below).slice(1)) {
    if (fits(await estimateUsage(estimator, estimator.facts.totalLayers, ctxSize), hardware)) return ctxSize;
  }
  return undefined;
}

export function toEstimates(usage: Usage): PlanEstimates {
  const weightsBytes = sum(usage.weights);
  const kvCacheBytes = sum(usage.kv);
  const computeBytes = sum(usage.compute);
  return {
    weightsBytes,
    kvCacheBytes,
    computeBytes,
    totalBytes: weightsBytes + kvCacheBytes + computeBytes,
    ramBytes: ramOf(usage),
    vramBytes: vramOf(usage),
  };
}
