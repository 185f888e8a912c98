import type { MemorySplit, ModelFacts } from "./plan-types.js";

/** The memory a context needs besides the weights, split by where it lives. */
export interface ContextEstimate {
  kv: MemorySplit;
  /** Compute graph buffers and the output buffer. */
  compute: MemorySplit;
}

/**
 * How much memory a model needs for a given offload and context. The decision logic only talks to
 * this interface, so tests can plan against made-up models and machines; the real one wraps
 * node-llama-cpp's GGUF insights (insights-estimator.ts).
 */
export interface ModelEstimator {
  readonly facts: ModelFacts;
  weights(gpuLayers: number): Promise<MemorySplit>;
  /** `ctxSize` as the config means it for this engine (see InsightsEstimatorOptions.ctxMode). */
  context(ctxSize: number, gpuLayers: number): Promise<ContextEstimate>;
}

/** Everything one (gpuLayers, ctxSize) choice needs. */
export interface Usage {
  gpuLayers: number;
  ctxSize: number;
  weights: MemorySplit;
  kv: MemorySplit;
  compute: MemorySplit;
}

export async function estimateUsage(estimator: ModelEstimator, gpuLayers: number, ctxSize: number): Promise<Usage> {
  const [weights, context] = await Promise.all([estimator.weights(gpuLayers), estimator.context(ctxSize, gpuLayers)]);
  return { gpuLayers, ctxSize, weights, kv: context.kv, compute: context.compute };
}

export const sum = (split: MemorySplit): number => split.ramBytes + split.vramBytes;
export const ramOf = (usage: Usage): number => usage.weights.ramBytes + usage.kv.ramBytes + usage.compute.ramBytes;
export const vramOf = (usage: Usage): number => usage.weights.vramBytes + usage.kv.vramBytes + usage.compute.vramBytes;
