import type { SignalLatch } from "../app/process/signal-latch.js";

/**
 * The process itself, for the commands that own its streams and its end (serve-*, chat, pod):
 * stdin and stdout carry their protocol or conversation, and they exit explicitly because stdin
 * may hold the event loop open. main.ts passes `process`.
 */
export type ProcessIo = Pick<NodeJS.Process, "stdin" | "stdout" | "stderr" | "exit">;

/** What a command may touch of the outside world; injected so commands are testable in process. */
export interface CliDeps {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Where a command that only prints writes (doctor, plan, models...): other streams in tests. */
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdoutIsTTY: boolean;
  /** stderr is a terminal: progress bars redraw in place there (plain lines otherwise). */
  stderrIsTTY?: boolean;
  version: string;
  setExitCode(code: number): void;
  /** Signals held since the process started (main.ts); absent when the CLI runs inside a test. */
  signals?: SignalLatch;
  /** The process's own streams and exit (see ProcessIo). */
  io: ProcessIo;
}
