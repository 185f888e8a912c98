import { killTreeSync } from "./kill-tree.js";
import { hostProcessPlatform, type ProcessPlatform } from "./process-platform.js";

/**
 * The process groups of the children one runtime started and must not outlive it. Owned by the
 * composition root (src/app), which kills what is left synchronously from its `exit` hook (an
 * uncaught exception, a process.exit() elsewhere: paths on which no close() runs). A SIGKILL of
 * our own process runs no hook at all; the llama-server watchdog covers that case.
 */
export class ChildRegistry {
  private readonly groups = new Set<number>();

  constructor(private readonly platform: ProcessPlatform = hostProcessPlatform()) {}

  /** `pid` leads its own process group (spawned detached; on Windows, the root of a process tree). */
  add(pid: number): void {
    this.groups.add(pid);
  }

  delete(pid: number): void {
    this.groups.delete(pid);
  }

  get size(): number {
    return this.groups.size;
  }

  /** Synchronous, so it can run inside an `exit` handler. */
  killAll(signal: NodeJS.Signals = "SIGKILL"): void {
    for (const group of this.groups) killTreeSync(group, signal, this.platform);
    this.groups.clear();
  }
}
