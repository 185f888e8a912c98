import { ramOf, vramOf, type Usage } from "./estimator.js";
import type { HardwareSnapshot } from "./plan-types.js";

/** Memory a plan may use: what is free minus the margin kept back. Never negative. */
export function usableVram(hardware: HardwareSnapshot): number {
  return Math.max(0, hardware.gpu.vram.freeBytes - hardware.margins.vramBytes);
}

export function usableRam(hardware: HardwareSnapshot): number {
  return Math.max(0, hardware.ram.freeBytes - hardware.margins.ramBytes);
}

export function hasGpu(hardware: HardwareSnapshot): boolean {
  return hardware.gpu.backend !== false && hardware.gpu.vram.totalBytes > 0;
}

/**
 * RAM a choice takes. On unified-memory machines (Apple Silicon) what sits "on the GPU" is RAM
 * too, so it counts against both pools.
 */
export function ramNeeded(usage: Usage, hardware: HardwareSnapshot): number {
  return ramOf(usage) + (hardware.gpu.unifiedBytes > 0 ? vramOf(usage) : 0);
}

export function vramFits(usage: Usage, hardware: HardwareSnapshot): boolean {
  const vram = vramOf(usage);
  return vram === 0 || vram <= usableVram(hardware);
}

export function ramFits(usage: Usage, hardware: HardwareSnapshot): boolean {
  return ramNeeded(usage, hardware) <= usableRam(hardware);
}

export function fits(usage: Usage, hardware: HardwareSnapshot): boolean {
  return vramFits(usage, hardware) && ramFits(usage, hardware);
}
