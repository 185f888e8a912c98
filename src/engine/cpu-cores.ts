import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";

/** Runs `sysctl -n name` (macOS); null when it fails. Injected by tests. */
export type SysctlReader = (name: string) => string | null;

const readSysctl: SysctlReader = (name) => {
  try {
    return execFileSync("sysctl", ["-n", name], { encoding: "utf8", timeout: 2000, stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
};

/**
 * Physical performance cores, which is what `threads: auto` means for a llama-server launch (and
 * its plan): llama.cpp generation is memory-bound; hyper-threads and efficiency cores only add
 * contention (on a 2-core VM node-llama-cpp's default of 4+ threads was 30-800x slower). Counted
 * as llama.cpp counts them, without loading it: Linux, unique (physical id, core id) pairs of
 * /proc/cpuinfo; macOS, the performance cores (`hw.perflevel0.physicalcpu`; `hw.physicalcpu` on
 * Macs without core kinds); elsewhere (Windows) half the logical cores, llama.cpp's own fallback.
 */
export function physicalCores(platform: NodeJS.Platform = process.platform, sysctl: SysctlReader = readSysctl, cpuinfo: () => string = () => readFileSync("/proc/cpuinfo", "utf8")): number {
  const logical = Math.max(1, os.availableParallelism());
  if (platform === "linux") {
    try {
      const cores = new Set<string>();
      let physical = "0";
      for (const line of cpuinfo().split("\n")) {
        const [key, value] = line.split(":").map((part) => part.trim());
        if (key === "physical id") physical = value ?? "0";
        if (key === "core id") cores.add(`${physical}:${value ?? ""}`);
      }
      if (cores.size > 0) return cores.size;
    } catch {
      // no /proc in this container: the logical count below
    }
    return logical;
  }
  if (platform === "darwin") {
    for (const name of ["hw.perflevel0.physicalcpu", "hw.physicalcpu"]) {
      const count = Number(sysctl(name));
      if (Number.isInteger(count) && count > 0) return count;
    }
    return logical;
  }
  return Math.max(1, Math.floor(logical / 2));
}
