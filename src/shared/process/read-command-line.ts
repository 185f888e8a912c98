import { readFile } from "node:fs/promises";

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
