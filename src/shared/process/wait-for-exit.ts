import { delay } from "../abort.js";
import { isProcessAlive } from "./is-process-alive.js";

/** Polls until `pid` is gone (a zombie counts as gone); false when it outlives `timeoutMs`. */
export async function waitForProcessExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isProcessAlive(pid)) return true;
    if (Date.now() >= deadline) return false;
    await delay(20);
  }
}
