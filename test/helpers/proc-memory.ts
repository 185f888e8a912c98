import { readFile } from "node:fs/promises";

/** A process's resident memory from /proc/<pid>/status, in MiB: now (VmRSS) and its peak (VmHWM). */
export interface ProcMemory {
  rssMiB: number;
  hwmMiB: number;
}

/** Null when the process is gone or /proc is not there (not Linux). */
export async function procMemory(pid: number): Promise<ProcMemory | null> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const rss = /VmRSS:\s+(\d+) kB/.exec(status);
  const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
  if (rss === null || hwm === null) return null;
  return { rssMiB: Number(rss[1]) / 1024, hwmMiB: Number(hwm[1]) / 1024 };
}
