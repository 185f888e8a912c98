import { formatBytes } from "../../shared/format-bytes.js";
import { ramOf, sum, vramOf, type Usage } from "./estimator.js";
import { ramNeeded, usableRam, usableVram } from "./memory-fit.js";
import type { HardwareSnapshot } from "./plan-types.js";

/** Why the layer count is what it is; picks the words of the reason. */
export type LayerChoice =
  | { kind: "no_gpu" }
  | { kind: "configured" }
  | { kind: "all" }
  | { kind: "vram_limited" }
  | { kind: "none_fit" };

/**
 * The reason sentence: the decision first, then the numbers that justify it, e.g.
 * "28/41 layers on GPU (more would not fit): 5.2 GiB weights + 1.1 GiB KV at ctx 16384 + 0.3 GiB
 * compute = 6.6 GiB of 7.1 GiB free VRAM (0.5 GiB margin kept); 2.1 GiB in RAM (21.0 GiB free)".
 */
export function describePlan(usage: Usage, hardware: HardwareSnapshot, totalLayers: number, choice: LayerChoice, label: ContextLabel = plainContext): string {
  const ctx = label(usage.ctxSize);
  if (usage.gpuLayers === 0 || choice.kind === "no_gpu") {
    const why =
      choice.kind === "no_gpu" ? " (no GPU backend)" : choice.kind === "configured" ? " (gpu_layers: 0)" : choice.kind === "none_fit" ? ` (not one layer fits in ${formatBytes(usableVram(hardware))} of usable VRAM)` : "";
    return (
      `CPU only${why}: ${formatBytes(sum(usage.weights))} weights + ${formatBytes(sum(usage.kv))} KV at ${ctx} + ${formatBytes(sum(usage.compute))} compute` +
      ` = ${formatBytes(ramNeeded(usage, hardware))} fits in ${formatBytes(hardware.ram.freeBytes)} free RAM (${formatBytes(hardware.margins.ramBytes)} margin kept)` +
      (vramOf(usage) > 0 ? `; ${formatBytes(vramOf(usage))} of compute buffers on the GPU` : "")
    );
  }
  const why = choice.kind === "vram_limited" ? " (more would not fit)" : choice.kind === "configured" ? " (gpu_layers from the config)" : "";
  const onGpu =
    `${usage.gpuLayers}/${totalLayers} layers on GPU${why}: ${formatBytes(usage.weights.vramBytes)} weights + ${formatBytes(usage.kv.vramBytes)} KV at ${ctx}` +
    ` + ${formatBytes(usage.compute.vramBytes)} compute = ${formatBytes(vramOf(usage))} of ${formatBytes(hardware.gpu.vram.freeBytes)} free VRAM` +
    ` (${formatBytes(hardware.margins.vramBytes)} margin kept)`;
  const ram = ramOf(usage);
  const inRam =
    usage.weights.ramBytes > 0
      ? `; ${formatBytes(usage.weights.ramBytes)} of weights and ${formatBytes(ram - usage.weights.ramBytes)} of buffers in RAM`
      : `; ${formatBytes(ram)} in RAM`;
  return `${onGpu}${inRam} (${formatBytes(hardware.ram.freeBytes)} free)`;
}

/** "needs X, Y usable (Z free - M margin)" for one memory pool; used by the plan error. */
export function describePool(label: "RAM" | "VRAM", needed: number, hardware: HardwareSnapshot): string {
  const free = label === "RAM" ? hardware.ram.freeBytes : hardware.gpu.vram.freeBytes;
  const margin = label === "RAM" ? hardware.margins.ramBytes : hardware.margins.vramBytes;
  const usable = label === "RAM" ? usableRam(hardware) : usableVram(hardware);
  return `${formatBytes(needed)} of ${label} needed, ${formatBytes(usable)} usable (${formatBytes(free)} free - ${formatBytes(margin)} margin)`;
}

/** "8.0 GiB weights + 1.5 GiB KV at ctx 4096 + 0.3 GiB compute" */
export function describeParts(usage: Usage, label: ContextLabel = plainContext): string {
  return `${formatBytes(sum(usage.weights))} weights + ${formatBytes(sum(usage.kv))} KV at ${label(usage.ctxSize)} + ${formatBytes(sum(usage.compute))} compute`;
}

/** How a context size reads in a sentence; says how many sequences share the KV cache. */
export type ContextLabel = (ctxSize: number) => string;

export const plainContext: ContextLabel = (ctxSize) => `ctx ${ctxSize}`;

/**
 * embedded (node-llama-cpp): each of `sequences` gets the whole ctx_size ("ctx 4096 x 2 sequences");
 * llama-server: `-c` is shared by its slots ("ctx 4096 shared by 2 slots").
 */
export function contextLabel(sequences: number, shared: boolean): ContextLabel {
  if (sequences <= 1) return plainContext;
  return shared ? (ctxSize) => `ctx ${ctxSize} shared by ${sequences} slots` : (ctxSize) => `ctx ${ctxSize} x ${sequences} sequences`;
}
