// What /proc says about llama-server children and their watchdogs (Linux): for the no-orphan checks.
import { readFile, readdir } from "node:fs/promises";
import { WATCHDOG_NAME } from "../../src/shared/process/parent-watchdog.js";

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  argv: string[];
  /** The sh watchdog (argv `sh -c SCRIPT local-ai-watchdog program ...`), not the program. */
  watchdog: boolean;
}

async function readEntry(pid: number): Promise<ProcEntry | null> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  if (stat === "") return null;
  // Fields after the parenthesised name: state, ppid, pgrp.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return null; // dead, awaiting its reaper
  const raw = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
  const argv = raw.split("\0");
  if (argv.at(-1) === "") argv.pop();
  return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), argv, watchdog: argv.includes(WATCHDOG_NAME) };
}

export async function liveProcesses(filter: (entry: ProcEntry) => boolean): Promise<ProcEntry[]> {
  const found: ProcEntry[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const entry = await readEntry(Number(name));
    if (entry !== null && filter(entry)) found.push(entry);
  }
  return found;
}

/** The watchdogs in the process group led by `leader` (a server's group). */
export function watchdogsOf(leader: number): Promise<number[]> {
  return liveProcesses((entry) => entry.pid !== leader && entry.pgid === leader && entry.watchdog).then((entries) => entries.map((entry) => entry.pid));
}

/**
 * Live llama-servers started with `--port <port>`, and watchdogs of such servers: the ports
 * our tests pick are their own, so this never counts another test's (or helper's) servers.
 */
export function processesOnPort(port: number): Promise<ProcEntry[]> {
  return liveProcesses((entry) => {
    const at = entry.argv.indexOf("--port");
    return at > 0 && entry.argv[at + 1] === String(port);
  });
}
