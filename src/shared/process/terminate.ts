// Stopping processes: TERM, then KILL after a grace (in the style of execa's lib/terminate/).
import { waitForProcessExit } from "./wait-for-exit.js";

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

/** TERM to the group, KILL after `graceMs`; resolves with whether KILL was needed. */
export async function terminateProcessGroup(pid: number, graceMs: number): Promise<{ exited: boolean; forced: boolean }> {
  signalProcessGroup(pid, "SIGTERM");
  if (await waitForProcessExit(pid, graceMs)) return { exited: true, forced: false };
  signalProcessGroup(pid, "SIGKILL");
  return { exited: await waitForProcessExit(pid, 2000), forced: true };
}

/**
 * For a child that was already asked to stop (the MCP SDK's close ends stdin, then signals but
 * does not wait after its SIGKILL): waits `graceMs` for it to go, then KILLs it and waits again.
 * Returns whether it is gone; a host relies on us leaving no child behind.
 */
export async function ensureExited(pid: number, graceMs = 500): Promise<boolean> {
  if (await waitForProcessExit(pid, graceMs)) return true;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone between the check and the kill.
  }
  return waitForProcessExit(pid, 2000);
}
