import { readFileSync } from "node:fs";

/**
 * Resident memory of a live process in bytes (Linux /proc/<pid>/status VmRSS), or undefined where
 * it cannot be read (no /proc: macOS). A tiny proc file read synchronously, for /health.
 */
export function residentBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}
