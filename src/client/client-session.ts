import { ChildLink, type ChildExit } from "./child-link.js";
import { LocalAiError, type LocalAiErrorCode } from "./local-ai-error.js";

/** What the session does with the messages of one request. */
export interface PendingCall {
  onEvent?: ((event: Record<string, unknown>) => void) | undefined;
  resolve(result: unknown): void;
  reject(error: LocalAiError): void;
}

export interface ClientSessionOptions {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string | undefined;
  trace: ((direction: "send" | "receive", line: string) => void) | undefined;
  onStderrLine: (line: string) => void;
  onProtocolError: (reason: string) => void;
  onExit: (session: ClientSession, exit: ChildExit) => void;
}

/**
 * One child and the requests sent to it. Answers are matched by id (the client only sends string
 * ids); a message for an id no longer pending (a request the host aborted) is dropped. When the
 * child goes, every pending request fails at once with the error the client chooses.
 */
export class ClientSession {
  private readonly link: ChildLink;
  private readonly pending = new Map<string, PendingCall>();
  /** When the child answered `initialize`; null while starting. */
  readyAt: number | null = null;
  readonly exited: Promise<ChildExit>;

  constructor(options: ClientSessionOptions) {
    let exited!: (exit: ChildExit) => void;
    this.exited = new Promise((resolve) => (exited = resolve));
    this.link = new ChildLink({
      command: options.command,
      args: options.args,
      env: options.env,
      cwd: options.cwd,
      trace: options.trace,
      onMessage: (message) => this.route(message, options.onProtocolError),
      onProtocolError: options.onProtocolError,
      onStderrLine: options.onStderrLine,
      onExit: (exit) => {
        exited(exit);
        options.onExit(this, exit);
      },
    });
  }

  get pid(): number | undefined {
    return this.link.pid;
  }

  get alive(): boolean {
    return this.link.alive;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  stderrTail(): string[] {
    return this.link.stderrTail();
  }

  /** Sends a request; false (and nothing registered) when the child is gone. */
  send(id: string, method: string, params: Record<string, unknown>, call: PendingCall): boolean {
    if (!this.link.alive) return false;
    this.pending.set(id, call);
    if (!this.link.send({ id, method, params })) {
      this.pending.delete(id);
      return false;
    }
    return true;
  }

  /** Stops routing a request's messages (the host gave up on it); a late answer is dropped. */
  forget(id: string): void {
    this.pending.delete(id);
  }

  failAll(error: LocalAiError): void {
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) call.reject(error);
  }

  endInput(): void {
    this.link.endInput();
  }

  kill(): void {
    this.link.kill();
  }

  private route(message: Record<string, unknown>, onProtocolError: (reason: string) => void): void {
    const { id, type } = message;
    if (typeof id !== "string") {
      // An error with id null answers a line the server could not read: the client never writes one.
      onProtocolError(`a message for no request of ours: ${JSON.stringify(message).slice(0, 300)}`);
      return;
    }
    const call = this.pending.get(id);
    if (call === undefined) return;
    if (type === "event") {
      const { id: _id, type: _type, ...event } = message;
      call.onEvent?.(event);
    } else if (type === "result") {
      this.pending.delete(id);
      call.resolve(message.result);
    } else if (type === "error") {
      this.pending.delete(id);
      const details = typeof message.details === "object" && message.details !== null ? (message.details as Record<string, unknown>) : undefined;
      call.reject(new LocalAiError(String(message.code) as LocalAiErrorCode, String(message.message), details));
    } else {
      onProtocolError(`a message of unknown type ${JSON.stringify(type)} for request ${id}`);
    }
  }
}
