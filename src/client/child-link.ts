import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { LineSplitter } from "../shared/line-splitter.js";

/** How a child ended: its exit code or signal, or why it never ran (`spawn_error`). */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  spawn_error?: string;
}

export interface ChildLinkOptions {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string | undefined;
  /** One protocol message (a JSON object line from stdout). */
  onMessage(message: Record<string, unknown>): void;
  /** A stdout line that is not a protocol message (never expected: local-ai keeps stdout pure). */
  onProtocolError(reason: string): void;
  onStderrLine(line: string): void;
  onExit(exit: ChildExit): void;
  trace: ((direction: "send" | "receive", line: string) => void) | undefined;
}

/** A protocol line can be large (a doctor report, a long answer); beyond this it is dropped and reported. */
const MAX_STDOUT_LINE_BYTES = 64 * 1024 * 1024;
/** A log line longer than this is dropped (and said so): stderr can never grow memory. */
const MAX_STDERR_LINE_BYTES = 64 * 1024;
const STDERR_TAIL_LINES = 40;

/**
 * One spawned `local-ai serve-stdio`: NDJSON in on stdin, protocol lines out on stdout (split with
 * the same capped splitter the server uses), stderr drained line by line into a bounded tail.
 * node:child_process rather than execa: the client must stay light (importing it loads no
 * dependency at all), and it needs nothing execa adds here.
 */
export class ChildLink {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly tail: string[] = [];
  private ended = false;
  readonly startedAt = Date.now();

  constructor(private readonly options: ChildLinkOptions) {
    this.child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    const stdout = new LineSplitter(MAX_STDOUT_LINE_BYTES);
    const stderr = new LineSplitter(MAX_STDERR_LINE_BYTES);
    this.child.stdout.on("data", (chunk: Buffer) => {
      for (const item of stdout.push(chunk)) {
        if (item.kind === "overflow") options.onProtocolError(`a stdout line of ${item.bytes} bytes exceeds ${MAX_STDOUT_LINE_BYTES} bytes; dropped`);
        else this.onLine(item.text);
      }
    });
    this.child.stderr.on("data", (chunk: Buffer) => {
      for (const item of stderr.push(chunk)) this.onStderr(item.kind === "line" ? item.text : `[a log line of ${item.bytes} bytes was dropped]`);
    });
    // A last line without a newline (a crash message) still counts.
    this.child.stderr.on("end", () => {
      for (const item of stderr.end()) this.onStderr(item.kind === "line" ? item.text : `[a log line of ${item.bytes} bytes was dropped]`);
    });
    // EPIPE after the child died: the exit handler reports it; a write error must not crash the host.
    this.child.stdin.on("error", () => undefined);
    this.child.on("error", (error) => {
      // Spawning failed (ENOENT, EACCES): there will be no exit event.
      if (this.child.pid === undefined) this.end({ code: null, signal: null, spawn_error: error.message });
    });
    // `close`, not `exit`: every stdout line (the last answers) has been read by then.
    this.child.on("close", (code, signal) => this.end({ code, signal }));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.ended && this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined;
  }

  /** Writes one message line; false when the child can no longer take it. */
  send(message: object): boolean {
    if (!this.alive || !this.child.stdin.writable) return false;
    const line = JSON.stringify(message);
    this.options.trace?.("send", line);
    this.child.stdin.write(`${line}\n`);
    return true;
  }

  /** stdin EOF: local-ai answers what it has read, then exits by itself. */
  endInput(): void {
    if (this.child.stdin.writable) this.child.stdin.end();
  }

  /**
   * Force: SIGKILL on POSIX; on Windows `taskkill /T /F`, which also ends the processes local-ai
   * started (Windows has no signals, and killing a process there leaves its children running).
   */
  kill(): void {
    if (!this.alive) return;
    if (process.platform === "win32" && this.child.pid !== undefined) {
      const killer = spawn("taskkill", ["/pid", String(this.child.pid), "/T", "/F"], { stdio: "ignore", windowsHide: true });
      killer.on("error", () => this.child.kill());
      return;
    }
    this.child.kill("SIGKILL");
  }

  stderrTail(): string[] {
    return [...this.tail];
  }

  private onLine(text: string): void {
    this.options.trace?.("receive", text);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.options.onProtocolError(`stdout line is not JSON: ${text.slice(0, 200)}`);
      return;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.options.onProtocolError(`stdout line is not a JSON object: ${text.slice(0, 200)}`);
      return;
    }
    this.options.onMessage(value as Record<string, unknown>);
  }

  private onStderr(line: string): void {
    this.tail.push(line);
    if (this.tail.length > STDERR_TAIL_LINES) this.tail.shift();
    this.options.onStderrLine(line);
  }

  private end(exit: ChildExit): void {
    if (this.ended) return;
    this.ended = true;
    this.options.onExit(exit);
  }
}
