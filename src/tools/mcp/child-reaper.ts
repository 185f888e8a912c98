import { delay } from "../../shared/abort.js";

/** True while a process with this pid exists (signal 0 only checks; EPERM means it exists). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (isProcessAlive(pid)) {
    if (Date.now() >= until) return false;
    await delay(25);
  }
  return true;
}

/**
 * The SDK's transport close ends stdin, then sends SIGTERM, then SIGKILL, but does not wait after
 * the SIGKILL. The host app relies on us leaving no child behind, so we wait for the pid to be
 * gone and kill it ourselves if needed. Returns whether it is gone.
 */
export async function ensureExited(pid: number, graceMs = 500): Promise<boolean> {
  if (await waitForExit(pid, graceMs)) return true;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone between the check and the kill.
  }
  return waitForExit(pid, 2000);
}
