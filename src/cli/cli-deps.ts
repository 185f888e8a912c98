import type { SignalLatch } from "../app/signal-latch.js";

/** What a command may touch of the outside world; injected so commands are testable in process. */
export interface CliDeps {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** The terminal's input, for the few questions a command asks (init); absent inside tests. */
  stdin?: NodeJS.ReadableStream;
  /** stdin is a terminal: only then may a command ask a question. */
  stdinIsTTY?: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdoutIsTTY: boolean;
  /** stderr is a terminal: progress bars redraw in place there (plain lines otherwise). */
  stderrIsTTY?: boolean;
  version: string;
  setExitCode(code: number): void;
  /** Signals held since the process started (main.ts); absent when the CLI runs inside a test. */
  signals?: SignalLatch;
}
