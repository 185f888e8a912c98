import { spawn, type ChildProcess } from "node:child_process";
import type { CreateTerminalRequest, CreateTerminalResponse, TerminalOutputResponse, WaitForTerminalExitResponse } from "@agentclientprotocol/sdk";

interface Terminal {
  child: ChildProcess;
  output: string;
  exit: Promise<WaitForTerminalExitResponse>;
  limit: number | null;
}

/** The editor's `terminal/*` for the tests: each terminal is the command run for real in its cwd. */
export class TestTerminals {
  readonly created: CreateTerminalRequest[] = [];
  readonly killed: string[] = [];
  readonly released: string[] = [];
  private readonly terminals = new Map<string, Terminal>();
  private next = 0;

  create(request: CreateTerminalRequest): CreateTerminalResponse {
    this.created.push(request);
    const child = spawn(request.command, request.args ?? [], { cwd: request.cwd ?? undefined, stdio: ["ignore", "pipe", "pipe"] });
    const terminal: Terminal = {
      child,
      output: "",
      limit: request.outputByteLimit ?? null,
      exit: new Promise((resolve) => {
        child.on("exit", (code, signal) => resolve({ exitCode: code, signal }));
        child.on("error", () => resolve({ exitCode: 127, signal: null }));
      }),
    };
    const append = (chunk: Buffer): void => {
      terminal.output += chunk.toString("utf8");
    };
    child.stdout?.on("data", append);
    child.stderr?.on("data", append);
    const terminalId = `term-${++this.next}`;
    this.terminals.set(terminalId, terminal);
    return { terminalId };
  }

  output(terminalId: string): TerminalOutputResponse {
    const terminal = this.get(terminalId);
    const bytes = Buffer.from(terminal.output);
    const truncated = terminal.limit !== null && bytes.length > terminal.limit;
    return { output: truncated ? bytes.subarray(bytes.length - (terminal.limit as number)).toString("utf8") : terminal.output, truncated };
  }

  waitForExit(terminalId: string): Promise<WaitForTerminalExitResponse> {
    return this.get(terminalId).exit;
  }

  kill(terminalId: string): Record<string, never> {
    this.killed.push(terminalId);
    this.get(terminalId).child.kill("SIGTERM");
    return {};
  }

  release(terminalId: string): Record<string, never> {
    this.released.push(terminalId);
    const terminal = this.terminals.get(terminalId);
    if (terminal?.child.exitCode === null) terminal.child.kill("SIGKILL");
    this.terminals.delete(terminalId);
    return {};
  }

  releaseAll(): void {
    for (const id of [...this.terminals.keys()]) this.release(id);
  }

  private get(terminalId: string): Terminal {
    const terminal = this.terminals.get(terminalId);
    if (terminal === undefined) throw new Error(`no terminal ${terminalId}`);
    return terminal;
  }
}
