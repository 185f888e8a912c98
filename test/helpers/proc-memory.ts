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

const PEAK_RSS_HOOK = new URL("./peak-rss-hook.js", import.meta.url).href;

/** Environment for a CLI run that reports its peak RSS into `file` when it exits (readPeakRssMiB). */
export function peakRssEnv(file: string): Record<string, string> {
  return { NODE_OPTIONS: `--import ${PEAK_RSS_HOOK}`, LOCAL_AI_TEST_PEAK_RSS_FILE: file };
}

/** The peak RSS (MiB) a run started with peakRssEnv(file) reported; null when it did not exit normally. */
export async function readPeakRssMiB(file: string): Promise<number | null> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text === "" ? null : Number(text) / 1024;
}
