import { readFileSync } from "node:fs";
import os from "node:os";

/**
 * Physical cores, which is what `threads: auto` means: llama.cpp generation is memory-bound and
 * hyper-threads only add contention (on a 2-core VM node-llama-cpp's default of 4+ threads was
 * 30-800x slower). Linux: unique (physical id, core id) pairs; elsewhere the logical count.
 */
export function physicalCores(): number {
  try {
    const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
    const cores = new Set<string>();
    let physical = "0";
    for (const line of cpuinfo.split("\n")) {
      const [key, value] = line.split(":").map((part) => part.trim());
      if (key === "physical id") physical = value ?? "0";
      if (key === "core id") cores.add(`${physical}:${value ?? ""}`);
    }
    if (cores.size > 0) return cores.size;
  } catch {
    // not Linux
  }
  return Math.max(1, os.availableParallelism());
}
