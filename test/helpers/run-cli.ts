import { spawn } from "node:child_process";
import { CLI_PATH } from "./cli-process.js";
import { WireTap, wireProtocolOf } from "./wire-recorder.js";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  /** Added to the clean environment (PATH, HOME, LOCAL_AI_LOG_LEVEL=warn). */
  env?: Record<string, string>;
  /** Bounds a hang only (the child is killed after it); never a speed assertion. */
  timeoutMs?: number;
  /** Written to the child's stdin, which is then closed (piped input); without it stdin is empty. */
  input?: string;
}

/**
 * The built CLI run to its end as a user runs it, in `cwd`, with a clean environment so a
 * developer's LOCAL_AI_CONFIG cannot leak in. A `--json` report or stdio output is validated
 * against the published schemas on the way (wire-recorder.ts).
 */
export function runCli(args: readonly string[], cwd: string, options: RunCliOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOCAL_AI_LOG_LEVEL: "warn", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    // Closed at once (like /dev/null) or after the piped input.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString("utf8");
      const protocol = wireProtocolOf(args);
      if (protocol !== null && stdout !== "") new WireTap(protocol, `local-ai ${args[0] ?? ""}`).document(stdout);
      resolve({ code, stdout, stderr: Buffer.concat(err).toString("utf8") });
    });
  });
}
