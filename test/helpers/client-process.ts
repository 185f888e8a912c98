// The client run that codex-exec.ts and claude-code-run.ts share, and the one place a coding
// client (Codex CLI, Claude Code) is started: only from inside a network namespace that has
// nothing but loopback (`unshare --net`, made by loopback-netns.ts around the scenario script),
// checked here before every spawn. Its output is collected; it is killed after a hang.
import { spawn } from "node:child_process";
import { assertOnlyLoopback } from "./loopback-netns.js";

export interface ClientProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The client binary (`name` for the refusal) run to its end with `args`, in `cwd`, with exactly
 * `env`; killed after `timeoutMs` (a hang only). Refused unless this process sees loopback only.
 */
export async function runClientProcess(name: string, binary: string, args: readonly string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number | undefined }): Promise<ClientProcessRun> {
  assertOnlyLoopback(name);
  const child = spawn(binary, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 240_000);
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal }));
  }).finally(() => clearTimeout(timer));
  return { code, signal, stdout, stderr };
}
