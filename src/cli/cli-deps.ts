/** What a command may touch of the outside world; injected so commands are testable in process. */
export interface CliDeps {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdoutIsTTY: boolean;
  version: string;
  setExitCode(code: number): void;
}
