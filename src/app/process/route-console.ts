import { format } from "node:util";

const METHODS = ["log", "info", "debug", "trace", "warn", "error"] as const;

export type ConsoleLevel = "info" | "debug" | "warn" | "error";

/**
 * Where stdout is the output (a protocol, or `pull`'s path), a library may still print with
 * console.* whatever options it was given (node-llama-cpp announces a Hugging Face rate limit with
 * console.info even with `cli: false`). From here on console output goes to `write` (the log on
 * stderr, or stderr itself); the returned function puts console back.
 */
export function routeConsole(write: (level: ConsoleLevel, text: string) => void): () => void {
  // The one place that touches console: to take it away from stdout.
  const target: Console = console;
  const saved = METHODS.map((method) => [method, target[method].bind(target)] as const);
  for (const method of METHODS) {
    const level: ConsoleLevel = method === "error" ? "error" : method === "warn" ? "warn" : method === "log" || method === "info" ? "info" : "debug";
    target[method] = (...args: unknown[]): void => write(level, format(...args));
  }
  return () => {
    for (const [method, original] of saved) target[method] = original;
  };
}
