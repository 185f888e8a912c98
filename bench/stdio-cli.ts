import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

export type Line = Record<string, unknown>;

export interface StdioCli {
  /** The CLI process's pid (its CPU time, from /proc). */
  readonly pid: number;
  /**
   * Sends `message` and resolves with its lines (each with its arrival time) up to its result or
   * error; `onLine` sees each of them as it arrives (to send a cancel mid-request).
   */
  request(message: Line, onLine?: (line: Line, at: number) => void): Promise<{ lines: Array<{ line: Line; at: number }>; sentAt: number }>;
  /** Writes one line without waiting for anything; returns when it was written (performance.now()). */
  send(message: Line): number;
  /** `shutdown`, then the exit. */
  stop(): Promise<void>;
}

/** The built CLI's serve-stdio in `dir` (config.yaml there), as the kv, swap and prefill benches drive it. */
export function startStdioCli(dir: string): StdioCli {
  const child = spawn(process.execPath, [CLI, "serve-stdio", "--config", "config.yaml"], { cwd: dir, env: { ...process.env, LOCAL_AI_LOG_LEVEL: "warn" }, stdio: ["pipe", "pipe", "inherit"] });
  child.stdout.setEncoding("utf8");
  let partial = "";
  const listeners = new Set<(line: Line, at: number) => void>();
  child.stdout.on("data", (chunk: string) => {
    const at = performance.now();
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    for (const text of parts) for (const listener of [...listeners]) listener(JSON.parse(text) as Line, at);
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const send = (message: Line): number => {
    const at = performance.now();
    child.stdin.write(`${JSON.stringify(message)}\n`);
    return at;
  };
  return {
    pid: child.pid ?? 0,
    send,
    request: (message, onLine) =>
      new Promise((resolve) => {
        const lines: Array<{ line: Line; at: number }> = [];
        const listener = (line: Line, at: number): void => {
          if (line.id !== message.id) return;
          lines.push({ line, at });
          onLine?.(line, at);
          if (line.type === "result" || line.type === "error") {
            listeners.delete(listener);
            resolve({ lines, sentAt });
          }
        };
        listeners.add(listener);
        const sentAt = send(message);
      }),
    stop: async () => {
      child.stdin.write(`${JSON.stringify({ id: "bye", method: "shutdown" })}\n`);
      await exited;
    },
  };
}
