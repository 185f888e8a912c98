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

/**
 * CPU time (user + system, seconds) `pid` has used so far, from /proc/<pid>/stat, threads
 * included; clock ticks are 100 a second on Linux. Throws when the process is gone.
 */
export function readCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 (utime) and 15 (stime) of proc(5), i.e. 11 and 12 after the name and state.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
