// Orphan checks that cannot pass vacuously: the children of a process, read from /proc on Linux
// and from `ps` elsewhere (macOS). Where neither can be read the helpers throw: an empty list must
// mean "no child", never "could not look".
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { isProcessAlive } from "../../src/shared/process/is-process-alive.js";

/** Pids of the live processes whose parent is `parent`. Throws where the process table cannot be read. */
export async function childrenOf(parent: number): Promise<number[]> {
  if (existsSync("/proc/self/stat")) {
    const pids: number[] = [];
    for (const entry of await readdir("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // Zombies (state Z) are dead: their parent has just not reaped them yet.
      if (Number(fields[1]) === parent && fields[0] !== "Z") pids.push(Number(entry));
    }
    return pids;
  }
  if (process.platform === "win32") throw new Error("childrenOf: no /proc and no ps on Windows; this check cannot run here");
  // `ps -A -o pid=,ppid=` is POSIX: every process, pid and parent pid.
  const table = execFileSync("ps", ["-A", "-o", "pid=,ppid="], { encoding: "utf8" });
  return table
    .split("\n")
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter(([pid, ppid]) => ppid === parent && pid !== undefined && Number.isInteger(pid))
    .map(([pid]) => pid as number);
}

/** Bounded wait for processes that are not our children to be gone (they send us no exit event). */
export async function allGone(pids: readonly number[], ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (pids.some(isProcessAlive) && Date.now() < until) await sleep(25);
  return !pids.some(isProcessAlive);
}
