// Looking at and stopping processes that are not (or no longer) our direct children: orphaned
// servers found through the pid file. Our own children are stopped through server-process.ts.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { delay as sleep } from "../../shared/abort.js";

/** argv of a live process, or null when it is gone or cannot be read. */
export async function readCommandLine(pid: number): Promise<string[] | null> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, "utf8");
    const argv = raw.split("\0");
    if (argv.at(-1) === "") argv.pop();
    return argv.length > 0 ? argv : null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (process.platform === "linux" || code !== "ENOENT") return null;
  }
  // No /proc (macOS): ps gives the command line joined by spaces, good enough for the checks.
  // execa (and its dependency tree) is imported on the first spawn only: it is off every start-up path.
  const { execa } = await import("execa");
  const result = await execa("ps", ["-o", "args=", "-p", String(pid)], { reject: false, stdin: "ignore", timeout: 5000 });
  const line = result.exitCode === 0 && typeof result.stdout === "string" ? result.stdout.trim() : "";
  return line === "" ? null : line.split(/\s+/);
}

/**
 * Is `pid` a live process? A zombie (dead, not yet reaped by a parent that may never do so, as
 * in containers whose init does not reap) counts as gone.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 3, after the parenthesised command name (which may itself contain spaces).
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return process.platform !== "linux";
  }
}

/** Sends `signal` to the process group led by `pid` (our children are group leaders), else the pid. */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

export async function waitForProcessExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isProcessAlive(pid)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
}

/** TERM to the group, KILL after `graceMs`; resolves with whether KILL was needed. */
export async function terminateProcessGroup(pid: number, graceMs: number): Promise<{ exited: boolean; forced: boolean }> {
  signalProcessGroup(pid, "SIGTERM");
  if (await waitForProcessExit(pid, graceMs)) return { exited: true, forced: false };
  signalProcessGroup(pid, "SIGKILL");
  return { exited: await waitForProcessExit(pid, 2000), forced: true };
}

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
