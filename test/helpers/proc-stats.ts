import { readdirSync, readFileSync } from "node:fs";

/** What /proc says about a process at one moment (Linux only). */
export interface ProcStats {
  /** Resident set size (VmRSS). */
  rssBytes: number;
  /** Peak resident set size so far (VmHWM). */
  peakRssBytes: number;
  /** Open file descriptors (entries of /proc/<pid>/fd). */
  fds: number;
  threads: number;
}

/** Reads VmRSS, VmHWM, Threads and the fd count of `pid`; throws when the process is gone. */
export function readProcStats(pid: number): ProcStats {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status);
    if (match?.[1] === undefined) throw new Error(`/proc/${pid}/status has no ${name}`);
    return Number(match[1]);
  };
  return { rssBytes: field("VmRSS") * 1024, peakRssBytes: field("VmHWM") * 1024, fds: readdirSync(`/proc/${pid}/fd`).length, threads: field("Threads") };
}

export const MiB = 1024 * 1024;

export const mib = (bytes: number): string => (bytes / MiB).toFixed(1);
