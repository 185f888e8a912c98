import { killTree } from "./kill-tree.js";
import type { ProcessPlatform } from "./process-platform.js";
import { terminateProcessGroup } from "./terminate.js";
import { waitForProcessExit } from "./wait-for-exit.js";

/**
 * Stops a process and its descendants: POSIX TERM to the group, KILL after `graceMs`; Windows
 * `taskkill /T /F` at once (no graceful signal reaches a console program there).
 */
export async function terminateTree(pid: number, graceMs: number, platform: ProcessPlatform): Promise<{ exited: boolean; forced: boolean }> {
  if (platform.os !== "win32") return terminateProcessGroup(pid, graceMs);
  await killTree(pid, "SIGKILL", platform);
  return { exited: await waitForProcessExit(pid, Math.max(graceMs, 2000)), forced: true };
}
