import os from "node:os";
import type { CheckResult } from "../doctor-report.js";
import { fail, ok, warn } from "../check-result.js";
import { formatBytes } from "../../shared/format-bytes.js";

/** What the system checks read; injectable so the thresholds can be tested on any machine. */
export interface SystemProbe {
  platform: string;
  release: string;
  arch: string;
  cpuModel: string;
  logicalCores: number;
  totalMemBytes: number;
  freeMemBytes: number;
  /** Where the memory figures come from: node-llama-cpp's RAM state, or the OS's free memory. */
  memorySource?: "node-llama-cpp" | "os";
  nodeVersion: string;
}

export const MIN_NODE_VERSION = "20.5.0";
/** Below this much free memory even a small quantized model will swap or fail to load. */
export const LOW_FREE_MEMORY_BYTES = 4 * 1024 ** 3;

export function readSystemProbe(): SystemProbe {
  const cpus = os.cpus();
  return {
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    cpuModel: cpus[0]?.model.trim() || "unknown",
    // os.cpus() can be empty in some containers; availableParallelism still answers.
    logicalCores: typeof os.availableParallelism === "function" ? os.availableParallelism() : cpus.length,
    totalMemBytes: os.totalmem(),
    freeMemBytes: os.freemem(),
    nodeVersion: process.versions.node,
  };
}

/** How long the system check waits for node-llama-cpp's RAM state before using the OS's figure. */
const RAM_STATE_WAIT_MS = 5000;

/**
 * The probe with node-llama-cpp's RAM state, when it answers in time. os.freemem() leaves out
 * memory the OS gives back at once (macOS's inactive pages, Linux's reclaimable cache on old
 * kernels), so it warns falsely there; node-llama-cpp's figure is the one it loads models against.
 */
export async function probeWithRamState(probe: SystemProbe, ramState: () => Promise<{ total: number; free: number }>): Promise<SystemProbe> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), RAM_STATE_WAIT_MS)));
  try {
    const state = await Promise.race([ramState().catch(() => null), late]);
    if (state === null || !(state.total > 0) || !(state.free >= 0)) return { ...probe, memorySource: "os" };
    return { ...probe, totalMemBytes: state.total, freeMemBytes: state.free, memorySource: "node-llama-cpp" };
  } finally {
    clearTimeout(timer);
  }
}

export async function checkSystem(probe: SystemProbe = readSystemProbe()): Promise<CheckResult[]> {
  return [checkOs(probe), checkCpu(probe), checkMemory(probe), checkNode(probe.nodeVersion)];
}

function checkOs(probe: SystemProbe): CheckResult {
  return ok("system.os", "Operating system", `${probe.platform} ${probe.release} (${probe.arch})`, {
    platform: probe.platform,
    release: probe.release,
    arch: probe.arch,
  });
}

function checkCpu(probe: SystemProbe): CheckResult {
  const data = { model: probe.cpuModel, logical_cores: probe.logicalCores };
  const finding = `${probe.cpuModel}, ${probe.logicalCores} logical core${probe.logicalCores === 1 ? "" : "s"}`;
  if (probe.logicalCores < 2) {
    return warn("system.cpu", "CPU", finding, "inference on one core is very slow; give the machine (or container) more CPUs", data);
  }
  return ok("system.cpu", "CPU", finding, data);
}

function checkMemory(probe: SystemProbe): CheckResult {
  const data = { total_bytes: probe.totalMemBytes, free_bytes: probe.freeMemBytes, source: probe.memorySource ?? "os" };
  const finding = `${formatBytes(probe.freeMemBytes)} free of ${formatBytes(probe.totalMemBytes)}`;
  if (probe.freeMemBytes < LOW_FREE_MEMORY_BYTES) {
    return warn(
      "system.memory",
      "Memory",
      `${finding} (less than ${formatBytes(LOW_FREE_MEMORY_BYTES)} free)`,
      "close other programs or pick a smaller (more quantized) model; `local-ai plan` says whether a model fits",
      data,
    );
  }
  return ok("system.memory", "Memory", finding, data);
}

export function checkNode(version: string): CheckResult {
  const data = { version, required: `>=${MIN_NODE_VERSION}` };
  if (compareVersions(version, MIN_NODE_VERSION) < 0) {
    return fail(
      "system.node",
      "Node.js",
      `Node.js ${version} is too old (${MIN_NODE_VERSION} or newer is required)`,
      `install Node.js 20.5 or newer (for example the current LTS from https://nodejs.org or via nvm: \`nvm install --lts\`)`,
      data,
    );
  }
  return ok("system.node", "Node.js", `Node.js ${version}`, data);
}

/** Numeric compare of dotted versions; a leading "v" and any pre-release suffix are ignored. */
export function compareVersions(a: string, b: string): number {
  const parts = (value: string): number[] => value.replace(/^v/, "").split(/[.-]/).slice(0, 3).map((part) => Number.parseInt(part, 10) || 0);
  const left = parts(a);
  const right = parts(b);
  for (let index = 0; index < 3; index += 1) {
    const diff = (left[index] ?? 0) - (right[index] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}
