/** What a command may touch of the outside world; injected so commands are testable in process. */
export interface CliDeps {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdoutIsTTY: boolean;
  /** stderr is a terminal: progress bars redraw in place there (plain lines otherwise). */
  stderrIsTTY?: boolean;
  version: string;
  setExitCode(code: number): void;
}
