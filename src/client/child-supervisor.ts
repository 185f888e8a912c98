import { settlesWithin } from "../shared/abort.js";
import type { ChildExit } from "./child-link.js";
import { ClientSession } from "./client-session.js";
import type { SpawnSpec } from "./default-command.js";
import { LocalAiError } from "./local-ai-error.js";
import type { ClientLogger } from "./log-record.js";
import type { InitializeResult } from "./protocol-types.js";
import { restartDelay, type RestartPolicy } from "./restart-policy.js";

/** `exit`: a child ended. Data is snake_case, like the wire. */
export interface ExitInfo {
  pid: number | undefined;
  exit_code: number | null;
  signal: string | null;
  /** Set when it could not be started at all. */
  spawn_error?: string;
  /** True when `close()` asked for it. */
  expected: boolean;
  stderr_tail: string[];
  /** When the next start is due, or null when the client will not restart it. */
  restart_in_ms: number | null;
}

/** `restart`: a restarted child answered `initialize`. */
export interface RestartInfo {
  attempt: number;
  pid: number | undefined;
  initialize: InitializeResult;
}

export interface SupervisorOptions {
  spec: SpawnSpec;
  cwd: string | undefined;
  policy: RestartPolicy | null;
  closeTimeoutMs: number;
  clientInfo: { name: string; version: string };
  logger: ClientLogger | undefined;
  trace: ((direction: "send" | "receive", line: string) => void) | undefined;
  newId(): string;
  onExit(info: ExitInfo): void;
  onRestart(info: RestartInfo): void;
  onStderrLine(line: string): void;
}

/** Calls made while the child (re)starts wait here; settled when it is ready, or when the client gives up. */
interface Waiting {
  promise: Promise<ClientSession>;
  resolve(session: ClientSession): void;
  reject(error: LocalAiError): void;
}

type State = "idle" | "starting" | "ready" | "restarting" | "failed" | "closing" | "closed";

/**
 * The child's lifetime: spawn and `initialize`; an unexpected exit fails the calls in flight at
 * once (the session does) and restarts with exponential backoff until the policy's limit; a first
 * start that fails is not retried (a wrong command or config will not fix itself); `close()`
 * sends `shutdown`, closes stdin, waits, then kills.
 */
export class ChildSupervisor {
  private state: State = "idle";
  private session: ClientSession | null = null;
  private waiting: Waiting | null = null;
  private attempts = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private lastFailure: LocalAiError | null = null;
  private closing: Promise<void> | null = null;
  initializeResult: InitializeResult | null = null;

  constructor(private readonly options: SupervisorOptions) {}

  get pid(): number | undefined {
    return this.session?.pid;
  }

  /** Why the child is not running, for a call that found it gone. */
  get failure(): LocalAiError {
    return this.lastFailure ?? new LocalAiError("process_exited", "local-ai is not running");
  }

  /**
   * The running session; waits while one is (re)starting. The first call starts the child; after
   * the client gave up (or `restart: false`), only an explicit start (`restartIfFailed`) does.
   */
  ready(restartIfFailed = false): Promise<ClientSession> {
    switch (this.state) {
      case "ready":
        return Promise.resolve(this.session as ClientSession);
      case "closing":
      case "closed":
        return Promise.reject(closedError());
      case "failed":
        if (!restartIfFailed) return Promise.reject(this.failure);
        this.attempts = 0;
        this.spawn("starting");
        return this.waitForReady().promise;
      case "idle":
        this.spawn("starting");
        return this.waitForReady().promise;
      case "starting":
      case "restarting":
        return this.waitForReady().promise;
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.state = "closing";
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.settleWaiting(null, closedError());
    const session = this.session;
    if (session?.alive === true) {
      session.send(this.options.newId(), "shutdown", {}, { resolve: () => undefined, reject: () => undefined });
      session.endInput();
      if (!(await settlesWithin(session.exited, this.options.closeTimeoutMs))) {
        this.options.logger?.warn({ pid: session.pid }, "local-ai did not exit in time after shutdown; killing it");
        session.kill();
        await settlesWithin(session.exited, 5_000);
      }
    }
    this.state = "closed";
  }

  private spawn(state: "starting" | "restarting"): void {
    this.state = state;
    this.waitForReady();
    const { spec, logger } = this.options;
    const session: ClientSession = new ClientSession({
      ...spec,
      cwd: this.options.cwd,
      trace: this.options.trace,
      onStderrLine: (line) => this.options.onStderrLine(line),
      onProtocolError: (reason) => logger?.warn({ pid: session.pid, reason }, "local-ai wrote something that is not a protocol message"),
      onExit: (ended, exit) => this.onExit(ended, exit),
    });
    this.session = session;
    session.send(this.options.newId(), "initialize", { protocol_versions: [1], client: this.options.clientInfo }, {
      resolve: (result) => {
        if (this.session !== session || this.state === "closing") return;
        this.initializeResult = result as InitializeResult;
        session.readyAt = Date.now();
        this.state = "ready";
        logger?.debug({ pid: session.pid }, "local-ai ready");
        if (state === "restarting") this.options.onRestart({ attempt: this.attempts, pid: session.pid, initialize: this.initializeResult });
        this.settleWaiting(session, null);
      },
      reject: (error) => {
        // An exit is handled by onExit; an error answer to initialize (a protocol mismatch) is final.
        if (this.session !== session || error.code === "process_exited" || error.code === "spawn_failed" || error.code === "client_closed") return;
        this.fail(error);
        session.kill();
      },
    });
  }

  private onExit(session: ClientSession, exit: ChildExit): void {
    const expected = this.state === "closing" || this.state === "closed";
    const error = expected ? closedError() : exitError(session, exit);
    session.failAll(error);
    if (this.session !== session) return;
    this.session = null;
    let delay: number | null = null;
    if (!expected && this.state !== "failed") {
      delay = this.state === "starting" ? null : this.nextRestartDelay(session);
      if (delay === null) this.fail(error);
      else {
        this.state = "restarting";
        this.waitForReady();
        this.options.logger?.warn({ pid: session.pid, exit_code: exit.code, signal: exit.signal, restart_in_ms: delay }, "local-ai exited; restarting");
        this.restartTimer = setTimeout(() => {
          this.restartTimer = null;
          this.spawn("restarting");
        }, delay);
      }
    }
    const info: ExitInfo = { pid: session.pid, exit_code: exit.code, signal: exit.signal, expected, stderr_tail: session.stderrTail(), restart_in_ms: delay };
    if (exit.spawn_error !== undefined) info.spawn_error = exit.spawn_error;
    this.options.onExit(info);
  }

  /** The backoff before the next attempt, or null when the policy says stop. */
  private nextRestartDelay(session: ClientSession): number | null {
    const { policy } = this.options;
    if (policy === null) return null;
    if (session.readyAt !== null && Date.now() - session.readyAt >= policy.resetAfterMs) this.attempts = 0;
    this.attempts += 1;
    return this.attempts > policy.maxRestarts ? null : restartDelay(policy, this.attempts);
  }

  /** The wait of calls made before the child is ready (one for the whole series of attempts). */
  private waitForReady(): Waiting {
    if (this.waiting === null) {
      let settle!: Pick<Waiting, "resolve" | "reject">;
      const promise = new Promise<ClientSession>((resolve, reject) => (settle = { resolve, reject }));
      promise.catch(() => undefined);
      this.waiting = { promise, ...settle };
    }
    return this.waiting;
  }

  private fail(error: LocalAiError): void {
    this.state = "failed";
    this.lastFailure = error;
    this.options.logger?.error({ code: error.code, details: error.details }, `local-ai is not running: ${error.message}`);
    this.settleWaiting(null, error);
  }

  private settleWaiting(session: ClientSession | null, error: LocalAiError | null): void {
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting === null) return;
    if (session !== null) waiting.resolve(session);
    else waiting.reject(error ?? this.failure);
  }
}

const closedError = (): LocalAiError => new LocalAiError("client_closed", "The client was closed");

function exitError(session: ClientSession, exit: ChildExit): LocalAiError {
  const how = exit.spawn_error !== undefined ? `could not be started: ${exit.spawn_error}` : exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.code)}`;
  const details: Record<string, unknown> = { pid: session.pid ?? null, exit_code: exit.code, signal: exit.signal, stderr_tail: session.stderrTail() };
  if (exit.spawn_error !== undefined) details.spawn_error = exit.spawn_error;
  return new LocalAiError(exit.spawn_error !== undefined ? "spawn_failed" : "process_exited", `local-ai ${how}`, details);
}
