import { readFile } from "node:fs/promises";

/**
 * argv of a live process from Linux's /proc, or null when it is gone, cannot be read, or there is
 * no /proc (macOS, Windows: process-info.ts asks `ps` or CIM there).
 */
export async function readCommandLine(pid: number): Promise<string[] | null> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, "utf8");
    const argv = raw.split("\0");
    if (argv.at(-1) === "") argv.pop();
    return argv.length > 0 ? argv : null;
  } catch {
    return null;
  }
}
