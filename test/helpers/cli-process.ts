import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from "node:child_process";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { WireTap, wireProtocolOf } from "./wire-recorder.js";

export const CLI_PATH = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

/**
 * Every CLI a test file started; a failed test must not leave one running (it would hang the file).
 * SIGTERM first, so a server closes the children it started (llama-server, MCP servers), which a
 * SIGKILL would leave behind; SIGKILL after a grace period for one that does not stop.
 */
const live = new Set<ChildProcess>();

/** Registers a child for the end-of-file cleanup above; it leaves the set when it exits. */
export function trackChild(child: ChildProcess): void {
  live.add(child);
  child.once("exit", () => live.delete(child));
}

after(async () => {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => {
            child.kill("SIGKILL");
            resolve();
          }, 3000);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill("SIGTERM");
        }),
    ),
  );
});

export type WireMessage = Record<string, unknown> & { id: string | number | null; type: string };

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/**
 * The built CLI as a child process, the way a host app runs it: requests in on stdin, protocol
 * lines out on stdout, logs on stderr. Every stdout line is parsed; one that is not JSON fails.
 */
export class CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly messages: WireMessage[] = [];
  readonly rawLines: string[] = [];
  stdout = "";
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private partial = "";
  private listeners: Array<() => void> = [];
  private stderrListeners: Array<() => void> = [];
  /** Every protocol line goes to the wire recorder, validated against schema/ after the file. */
  private readonly tap: WireTap | null;

  constructor(args: readonly string[], options: CliOptions = {}) {
    const protocol = wireProtocolOf(args);
    this.tap = protocol === null ? null : new WireTap(protocol, `local-ai ${args.filter((arg) => !arg.includes("/")).join(" ")}`);
    this.child = spawn(process.execPath, [CLI_PATH, ...args], {
      cwd: options.cwd,
      env: { ...process.env, LOCAL_AI_LOG_LEVEL: "warn", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout.setEncoding("utf8");
    this.child.stderr.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => this.onStdout(chunk));
    this.child.stderr.on("data", (chunk: string) => {
      this.stderr += chunk;
      for (const listener of [...this.stderrListeners]) listener();
    });
    this.child.stdin.on("error", () => undefined);
    trackChild(this.child);
    this.exited = new Promise((resolve) =>
      this.child.on("exit", (code, signal) => {
        if (this.tap !== null && this.tap.protocol.startsWith("cli.") && this.stdout !== "") this.tap.document(this.stdout);
        resolve({ code, signal });
      }),
    );
  }

  send(message: unknown): void {
    this.tap?.sent(message);
    this.child.stdin.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`);
  }

  write(raw: string | Buffer): boolean {
    return this.child.stdin.write(raw);
  }

  endInput(): void {
    this.child.stdin.end();
  }

  /** Resolves with the first message (seen or future) that matches, or rejects after the timeout. */
  waitFor(predicate: (message: WireMessage) => boolean, timeoutMs = 10_000): Promise<WireMessage> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.messages.find(predicate);
        if (found) {
          clearTimeout(timer);
          this.listeners = this.listeners.filter((listener) => listener !== onChange);
          resolve(found);
          return true;
        }
        return false;
      };
      const onChange = (): void => void check();
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((listener) => listener !== onChange);
        reject(new Error(`timed out waiting for a message; got ${JSON.stringify(this.messages).slice(0, 2000)}; stderr: ${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      if (!check()) this.listeners.push(onChange);
    });
  }

  /** Resolves once stderr (the log) matches, checked on each write; rejects after the timeout or at exit. */
  waitForStderr(pattern: RegExp, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const stop = (): void => {
        clearTimeout(timer);
        this.stderrListeners = this.stderrListeners.filter((listener) => listener !== check);
      };
      const check = (): void => {
        if (!pattern.test(this.stderr)) return;
        stop();
        resolve();
      };
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`timed out waiting for ${String(pattern)} on stderr: ${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      this.stderrListeners.push(check);
      check();
      // "close": the process exited and its stderr is fully read.
      this.child.once("close", () => {
        if (!this.stderrListeners.includes(check)) return;
        stop();
        reject(new Error(`exited before ${String(pattern)} appeared on stderr: ${this.stderr.slice(-2000)}`));
      });
    });
  }

  response(id: string | number, timeoutMs?: number): Promise<WireMessage> {
    return this.waitFor((message) => message.id === id && (message.type === "result" || message.type === "error"), timeoutMs);
  }

  async request(message: { id: string | number; method: string; params?: unknown }, timeoutMs?: number): Promise<WireMessage> {
    this.send(message);
    return this.response(message.id, timeoutMs);
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    this.child.kill(signal);
  }

  private onStdout(chunk: string): void {
    this.stdout += chunk;
    const parts = (this.partial + chunk).split("\n");
    this.partial = parts.pop() ?? "";
    for (const line of parts) {
      this.rawLines.push(line);
      if (this.tap !== null && !this.tap.protocol.startsWith("cli.")) this.tap.received(line);
      try {
        this.messages.push(JSON.parse(line) as WireMessage);
      } catch {
        this.messages.push({ id: null, type: "__not_json__", line });
      }
    }
    for (const listener of [...this.listeners]) listener();
  }
}

/** Asserts the stdio contract: every stdout byte is a complete protocol message line. */
export function protocolViolations(proc: CliProcess): string[] {
  const problems: string[] = [];
  if (proc.stdout !== "" && !proc.stdout.endsWith("\n")) problems.push("stdout does not end with a newline");
  for (const line of proc.rawLines) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      problems.push(`not JSON: ${line.slice(0, 200)}`);
      continue;
    }
    const message = parsed as Record<string, unknown>;
    if (typeof message !== "object" || message === null || !("id" in message)) problems.push(`no id: ${line.slice(0, 200)}`);
    else if (!["event", "result", "error"].includes(String(message.type))) problems.push(`bad type: ${line.slice(0, 200)}`);
  }
  return problems;
}
