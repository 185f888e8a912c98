import path from "node:path";
import { CliProcess } from "./cli-process.js";
import { tempConfig } from "./temp-config.js";

export interface PodProcess {
  proc: CliProcess;
  socketPath: string;
  dir: string;
  configPath: string;
}

/** Resolves when `text` appears on the process's stderr, or rejects when it exits first. */
export function stderrIncludes(proc: CliProcess, text: string, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => proc.stderr.includes(text);
    if (check()) return resolve();
    const onData = (): void => {
      if (!check()) return;
      cleanup();
      resolve();
    };
    const onExit = (): void => {
      cleanup();
      reject(new Error(`exited before "${text}" appeared on stderr: ${proc.stderr.slice(-3000)}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`"${text}" did not appear on stderr: ${proc.stderr.slice(-3000)}`));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      proc.child.stderr.off("data", onData);
      proc.child.off("exit", onExit);
    };
    // After CliProcess's own listener (which appends to proc.stderr).
    proc.child.stderr.on("data", onData);
    proc.child.once("exit", onExit);
  });
}

/** `local-ai serve-socket` (built CLI) with the given config body; resolves once it listens. */
export async function startPod(yaml: string, args: string[] = [], env: Record<string, string> = {}): Promise<PodProcess> {
  const { dir, configPath } = await tempConfig(yaml);
  return startPodIn(dir, configPath, args, env);
}

/** Another pod on an existing config folder (a restart, a second pod). */
export async function startPodIn(dir: string, configPath: string, args: string[] = [], env: Record<string, string> = {}): Promise<PodProcess> {
  const proc = new CliProcess(["serve-socket", "--config", configPath, ...args], { cwd: dir, env: { LOCAL_AI_LOG_LEVEL: "info", ...env } });
  await stderrIncludes(proc, "serve-socket listening");
  const socketIndex = args.indexOf("--socket");
  const socketPath = socketIndex >= 0 ? path.resolve(dir, args[socketIndex + 1]!) : path.join(dir, "data", "pod.sock");
  return { proc, socketPath, dir, configPath };
}
