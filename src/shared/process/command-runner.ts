import { spawnSync } from "node:child_process";

/** What a short-lived helper command (ps, taskkill, powershell) printed and how it ended. */
export interface CommandResult {
  exitCode: number | null;
  stdout: string;
}

/**
 * Runs a helper command to completion. Injected into the process layer so tests can record the
 * commands built for another platform and feed back recorded output.
 */
export interface CommandRunner {
  run(file: string, args: readonly string[], options?: { timeoutMs?: number }): Promise<CommandResult>;
  /** Synchronous, for `exit` handlers (which cannot wait). */
  runSync(file: string, args: readonly string[]): CommandResult;
}

/** The real runner: no shell, stdin closed, output as UTF-8, a timeout so a hung helper cannot hang us. */
export const systemCommandRunner: CommandRunner = {
  async run(file, args, options = {}) {
    // execa (and its dependency tree) is imported on first use only: it is off every start-up path.
    const { execa } = await import("execa");
    const result = await execa(file, [...args], { reject: false, stdin: "ignore", timeout: options.timeoutMs ?? 5000, windowsHide: true });
    return { exitCode: result.exitCode ?? null, stdout: typeof result.stdout === "string" ? result.stdout : "" };
  },
  runSync(file, args) {
    const result = spawnSync(file, [...args], { stdio: ["ignore", "pipe", "ignore"], timeout: 5000, windowsHide: true, encoding: "utf8" });
    return { exitCode: result.status, stdout: result.stdout ?? "" };
  },
};
