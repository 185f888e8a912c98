import type { ProcessPlatform } from "./process-platform.js";
import { signalProcessGroup } from "./terminate.js";

/** The taskkill command that ends `pid` and every process it started (Windows has no process groups). */
export function taskkillArgs(pid: number): string[] {
  return ["/PID", String(pid), "/T", "/F"];
}

/**
 * Stops `pid` and its descendants. POSIX: `signal` to its process group (our supervised children
 * lead one). Windows: TerminateProcess for the whole tree through `taskkill /T /F` (there is no
 * gentle signal to send a console program there, so any signal is a forced kill).
 */
export async function killTree(pid: number, signal: NodeJS.Signals, platform: ProcessPlatform): Promise<boolean> {
  if (platform.os !== "win32") return signalProcessGroup(pid, signal);
  const result = await platform.runner.run("taskkill", taskkillArgs(pid), { timeoutMs: 10_000 });
  return result.exitCode === 0;
}

/** killTree for `exit` handlers: synchronous. */
export function killTreeSync(pid: number, signal: NodeJS.Signals, platform: ProcessPlatform): boolean {
  if (platform.os !== "win32") return signalProcessGroup(pid, signal);
  return platform.runner.runSync("taskkill", taskkillArgs(pid)).exitCode === 0;
}
