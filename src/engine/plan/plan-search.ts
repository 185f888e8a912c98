import { estimateUsage, type ModelEstimator, type Usage } from "./estimator.js";
import { fits, hasGpu, ramFits, vramFits } from "./memory-fit.js";
import type { HardwareSnapshot } from "./plan-types.js";

/** Below this a context is too small for an agent (system prompt + tools + a few turns). */
export const MIN_USEFUL_CTX = 2048;
/** The smallest context worth suggesting at all when even MIN_USEFUL_CTX does not fit. */
export const MIN_SUGGESTED_CTX = 256;

/**
 * The context sizes tried, largest first: the requested one, then powers of two down to
 * MIN_USEFUL_CTX (or the request itself when it is smaller). Automatic reduction never goes
 * below that floor; smaller sizes are only ever suggested in the error.
 */
export function contextCandidates(requested: number, floor = Math.min(requested, MIN_USEFUL_CTX)): number[] {
  const candidates = [requested];
  let size = 2 ** Math.floor(Math.log2(requested));
  if (size === requested) size /= 2;
  for (; size >= floor; size /= 2) candidates.push(size);
  return candidates;
}

/** Smaller sizes than `below`, down to MIN_SUGGESTED_CTX, largest first. */
export function suggestionCandidates(below: number): number[] {
  const sizes: number[] = [];
  let size = 2 ** Math.floor(Math.log2(below));
  if (size === below) size /= 2;
  for (; size >= MIN_SUGGESTED_CTX; size /= 2) sizes.push(size);
  return sizes;
}

/**
 * The most layers whose VRAM fits at this context (VRAM use grows with every offloaded layer, so a
 * binary search finds it in log2(layers) estimates). null when not even 0 layers fit: some
 * backends keep compute buffers on the GPU regardless.
 */
export async function mostLayersInVram(estimator: ModelEstimator, hardware: HardwareSnapshot, ctxSize: number, upTo: number): Promise<Usage | null> {
  const top = await estimateUsage(estimator, upTo, ctxSize);
  if (vramFits(top, hardware)) return top;
  let best = await estimateUsage(estimator, 0, ctxSize);
  if (!vramFits(best, hardware)) return null;
  let low = 0;
  let high = upTo; // invariant: low fits, high does not
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    const usage = await estimateUsage(estimator, mid, ctxSize);
    if (vramFits(usage, hardware)) {
      low = mid;
      best = usage;
    } else {
      high = mid;
    }
  }
  return best;
}

/**
 * The best layer count at one context: with `auto` on a GPU, as many layers as VRAM holds (RAM use
 * only falls as layers move to the GPU, so that is also the choice most likely to fit in RAM);
 * otherwise the fixed count. Returns the usage and whether it fits both pools.
 */
export async function bestAtContext(
  estimator: ModelEstimator,
  hardware: HardwareSnapshot,
  ctxSize: number,
  layers: "auto" | number,
): Promise<{ usage: Usage; fits: boolean }> {
  const total = estimator.facts.totalLayers;
  if (layers === "auto" && hasGpu(hardware)) {
    const usage = await mostLayersInVram(estimator, hardware, ctxSize, total);
    if (usage !== null) return { usage, fits: ramFits(usage, hardware) };
    const cpu = await estimateUsage(estimator, 0, ctxSize);
    return { usage: cpu, fits: false };
  }
  const usage = await estimateUsage(estimator, layers === "auto" ? 0 : layers, ctxSize);
  return { usage, fits: fits(usage, hardware) };
}
