import { readFile } from "node:fs/promises";

/** USER_HZ, the unit of /proc/<pid>/stat's start time: 100 on every Linux ABI node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * When a live process started (epoch ms, to about 10 ms, give or take a second of boot-time
 * rounding), or null where it cannot be read (no /proc: macOS; the process is gone).
 */
export async function processStartTime(pid: number): Promise<number | null> {
  try {
    const [stat, system] = await Promise.all([readFile(`/proc/${pid}/stat`, "utf8"), readFile("/proc/stat", "utf8")]);
    // Field 22 (starttime, ticks after boot); fields counted from 3 after the parenthesised name.
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    const boot = /^btime (\d+)$/m.exec(system)?.[1];
    if (!Number.isFinite(ticks) || boot === undefined) return null;
    return Number(boot) * 1000 + (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}
