import os from "node:os";
import type { Llama } from "node-llama-cpp";
import { formatBytes } from "../../shared/format-bytes.js";
import { physicalCores } from "../cpu-cores.js";
import type { GpuBackend, HardwareReport, HardwareSnapshot } from "./plan-types.js";

/**
 * Reads this machine. With a loaded node-llama-cpp the GPU side comes from the backend it really
 * uses, and the margins are node-llama-cpp's own paddings, so our "fits" agrees with what it
 * will accept when loading. Without one (only remote models), RAM and CPU come from the OS.
 */
export async function probeHardware(llama: Llama | null): Promise<HardwareSnapshot> {
  const logicalCores = typeof os.availableParallelism === "function" ? os.availableParallelism() : os.cpus().length;
  if (llama === null) {
    return {
      ram: { totalBytes: os.totalmem(), freeBytes: os.freemem() },
      gpu: { backend: false, devices: [], vram: { totalBytes: 0, freeBytes: 0 }, unifiedBytes: 0, probed: false },
      cpu: { logicalCores, mathCores: 0, serverCores: physicalCores() },
      margins: { ramBytes: defaultRamMargin(os.totalmem()), vramBytes: 0 },
    };
  }
  const [ram, vram, devices] = await Promise.all([llama.getRamState(), llama.getVramState(), llama.getGpuDeviceNames()]);
  const backend: GpuBackend = llama.gpu;
  return {
    ram: { totalBytes: ram.total, freeBytes: ram.free },
    gpu: {
      backend: llama.supportsGpuOffloading ? backend : false,
      devices,
      vram: { totalBytes: vram.total, freeBytes: vram.free },
      unifiedBytes: vram.unifiedSize,
      probed: true,
    },
    cpu: { logicalCores, mathCores: llama.cpuMathCores, serverCores: physicalCores() },
    margins: { ramBytes: llama.ramPaddingSize, vramBytes: llama.vramPaddingSize },
  };
}

/** node-llama-cpp's default on Linux: a quarter of RAM, at most 1 GiB (6 GiB elsewhere). */
function defaultRamMargin(totalBytes: number): number {
  const cap = (process.platform === "linux" ? 1 : 6) * 1024 ** 3;
  return Math.floor(Math.min(totalBytes * 0.25, cap));
}

/** One line for people: "CPU only (no GPU backend): 2 cores, 22.3 GiB free of 23.5 GiB RAM". */
export function describeHardware(hardware: HardwareSnapshot): HardwareReport {
  const cores = `${hardware.cpu.mathCores > 0 ? hardware.cpu.mathCores : hardware.cpu.logicalCores} cores`;
  const ram = `${formatBytes(hardware.ram.freeBytes)} free of ${formatBytes(hardware.ram.totalBytes)} RAM`;
  const { gpu } = hardware;
  let summary: string;
  if (!gpu.probed) summary = `${cores}, ${ram} (GPU not probed: no local model got that far)`;
  else if (gpu.backend === false) summary = `CPU only (no GPU backend): ${cores}, ${ram}`;
  else {
    const names = gpu.devices.length > 0 ? gpu.devices.join(", ") : "unnamed device";
    summary = `${gpu.backend} on ${names}: ${formatBytes(gpu.vram.freeBytes)} free of ${formatBytes(gpu.vram.totalBytes)} VRAM${gpu.unifiedBytes > 0 ? " (unified with RAM)" : ""}; ${cores}, ${ram}`;
  }
  return { ...hardware, summary };
}
