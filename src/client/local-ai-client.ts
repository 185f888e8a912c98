import { EventEmitter } from "node:events";
import { ChatTurnStream, type ChatTurn } from "./chat-turn.js";
import { ChildSupervisor, type ExitInfo, type RestartInfo } from "./child-supervisor.js";
import type { ClientSession } from "./client-session.js";
import { spawnSpec } from "./default-command.js";
import { LocalAiError } from "./local-ai-error.js";
import { logAt, parseLogRecord, type ClientLogger, type LogRecord } from "./log-record.js";
import type {
  ChatEvent,
  ChatParams,
  ChatResult,
  DoctorReport,
  InitializeResult,
  PlanParams,
  PlanReport,
  PullProgress,
  PullResult,
  RequestId,
  StatusResult,
  UnloadResult,
  TokenizeParams,
  TokenizeResult,
  DetokenizeParams,
  DetokenizeResult,
  PsResult,
  MetricsResult,
  WarmUpParams,
  WarmUpResult,
} from "./protocol-types.js";
import { restartPolicy, type RestartOptions } from "./restart-policy.js";

export interface LocalAiClientOptions {
  /** The program to run (default: `process.execPath`, this Node or Electron). */
  command?: string;
  /** Its arguments (default: this package's `local-ai` CLI and `serve-stdio`). */
  args?: readonly string[];
  /** A config file, passed as `--config`. */
  config?: string;
  /** Added to the host's environment; `undefined` removes a variable. */
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  /** The client's diagnostics and the child's log records (at their level). */
  logger?: ClientLogger;
  /** Restart a child that exits on its own, with backoff (default on); `false` = never. */
  restart?: RestartOptions | false;
  /** How long `close()` waits for a clean exit before killing (default 10 000 ms). */
  closeTimeoutMs?: number;
  /** Events one chat keeps for a host that does not consume them (default 1000; see ChatTurn). */
  maxBufferedEvents?: number;
  /** Sent in `initialize` (shows in local-ai's log). */
  clientInfo?: { name: string; version: string };
  /** Every protocol line, both ways, for debugging (and the tests' schema check). */
  trace?: (direction: "send" | "receive", line: string) => void;
}

export interface CallOptions {
  /** Aborting rejects the call with `cancelled` (a chat or pull is also cancelled in local-ai). */
  signal?: AbortSignal;
}

export interface LocalAiClientEvents {
  exit: [ExitInfo];
  restart: [RestartInfo];
  /** Every stderr line of the child, as written. */
  stderr: [string];
  /** The stderr lines that are log records, parsed. */
  log: [LogRecord];
}

/** Methods local-ai cancels when asked (`cancel {request_id}`); others are only abandoned. */
const CANCELLABLE = new Set(["chat", "pull"]);

/**
 * A supervised `local-ai serve-stdio` child with typed calls. See docs/embedding.md.
 */
export class LocalAiClient extends EventEmitter<LocalAiClientEvents> {
  private readonly supervisor: ChildSupervisor;
  private nextId = 0;

  constructor(private readonly options: LocalAiClientOptions = {}) {
    super();
    this.supervisor = new ChildSupervisor({
      spec: spawnSpec(options),
      cwd: options.cwd,
      policy: restartPolicy(options.restart),
      closeTimeoutMs: options.closeTimeoutMs ?? 10_000,
      clientInfo: options.clientInfo ?? { name: "local-ai-core/client", version: "1" },
      logger: options.logger,
      trace: options.trace,
      newId: () => this.newId(),
      onExit: (info) => this.emit("exit", info),
      onRestart: (info) => this.emit("restart", info),
      onStderrLine: (line) => this.onStderr(line),
    });
  }

  /** The running child's pid, if any. */
  get pid(): number | undefined {
    return this.supervisor.pid;
  }

  /**
   * Spawns local-ai and sends `initialize`; resolves with its answer (version, capabilities). The
   * first call starts it too; after the client gave up restarting (or with `restart: false`),
   * calls reject with the exit until `start()` is called again.
   */
  async start(): Promise<InitializeResult> {
    await this.supervisor.ready(true);
    return this.supervisor.initializeResult as InitializeResult;
  }

  /**
   * One agent turn. Iterate the turn for its events; `await turn.result` for the answer. Aborting
   * `signal` (or `turn.cancel()`) cancels it in local-ai and rejects at once with `cancelled`;
   * nothing of the turn is delivered after that.
   */
  chat(params: ChatParams & { input: NonNullable<ChatParams["input"]> }, options: CallOptions = {}): ChatTurn {
    const id = this.newId();
    const controller = new AbortController();
    const turn = new ChatTurnStream(id, this.options.maxBufferedEvents ?? 1000, () => controller.abort());
    const onAbort = (): void => controller.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted === true) controller.abort();
    void this.call<ChatResult>(id, "chat", params, controller.signal, (event) => turn.push(event as ChatEvent))
      .then(
        (result) => turn.finish(result),
        (error: LocalAiError) => turn.fail(error, error.code === "cancelled" && controller.signal.aborted),
      )
      .finally(() => options.signal?.removeEventListener("abort", onAbort));
    return turn;
  }

  ping(options: CallOptions = {}): Promise<StatusResult> {
    return this.request("ping", {}, options);
  }

  doctor(options: CallOptions = {}): Promise<DoctorReport> {
    return this.request("doctor", {}, options);
  }

  plan(params: PlanParams = {}, options: CallOptions = {}): Promise<PlanReport> {
    return this.request("plan", params, options);
  }

  warmUp(params: WarmUpParams = {}, options: CallOptions = {}): Promise<WarmUpResult> {
    return this.request("warm_up", params, options);
  }

  /** Cancels a chat by request id (`turn.id`), or the only active chat. */
  cancel(requestId?: RequestId, options: CallOptions = {}): Promise<StatusResult> {
    return this.request("cancel", requestId === undefined ? {} : { request_id: requestId }, options);
  }

  /** Gets a model (path, https URL or `hf:` reference); `onProgress` gets the `pull_progress` events. */
  pull(ref: string, options: CallOptions & { force?: boolean; onProgress?: (progress: PullProgress) => void } = {}): Promise<PullResult> {
    const { onProgress, signal } = options;
    return this.request("pull", { ref, force: options.force ?? false }, {
      ...(signal ? { signal } : {}),
      onEvent: (event) => {
        if (event.event === "pull_progress") onProgress?.({ downloaded_bytes: event.downloaded_bytes as number, total_bytes: event.total_bytes as number | null });
      },
    });
  }

  /** Closes the engines of one model (or all), freeing their memory; the next chat loads again. */
  unload(params: { model?: string } = {}, options: CallOptions = {}): Promise<UnloadResult> {
    return this.request("unload", params, options);
  }

  /** The memory budget and every configured model: loaded or not, its memory, idle expiry, pin, requests in flight. */
  ps(options: CallOptions = {}): Promise<PsResult> {
    return this.request("ps", {}, options);
  }

  /** The server's metrics as JSON (the series serve-http's GET /metrics exposes; docs/operations.md). */
  metrics(options: CallOptions = {}): Promise<MetricsResult> {
    return this.request("metrics", {}, options);
  }

  /** The model's own tokenizer (`model` absent: the default agent's model): token ids, and their texts with `with_pieces`. */
  tokenize(params: TokenizeParams, options: CallOptions = {}): Promise<TokenizeResult> {
    return this.request("tokenize", { ...params }, options);
  }

  /** Token ids back to text with the model's tokenizer. */
  detokenize(params: DetokenizeParams, options: CallOptions = {}): Promise<DetokenizeResult> {
    return this.request("detokenize", { ...params }, options);
  }

  /** Any method, for what the typed calls do not cover; `onEvent` gets its events (without `id`/`type`). */
  request<T>(method: string, params: Record<string, unknown> = {}, options: CallOptions & { onEvent?: (event: Record<string, unknown>) => void } = {}): Promise<T> {
    return this.call<T>(this.newId(), method, params, options.signal, options.onEvent);
  }

  /** Sends `shutdown`, closes stdin, waits for the exit (`closeTimeoutMs`), then kills. Idempotent. */
  close(): Promise<void> {
    return this.supervisor.close();
  }

  private newId(): string {
    this.nextId += 1;
    return String(this.nextId);
  }

  private async call<T>(id: string, method: string, params: object, signal: AbortSignal | undefined, onEvent?: (event: Record<string, unknown>) => void): Promise<T> {
    const cancelled = (): LocalAiError => new LocalAiError("cancelled", "Request cancelled");
    if (signal?.aborted === true) throw cancelled();
    const session = await abortable(this.supervisor.ready(), signal, cancelled);
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        session.forget(id);
        reject(cancelled());
        if (CANCELLABLE.has(method)) session.send(this.newId(), "cancel", { request_id: id }, { resolve: () => undefined, reject: () => undefined });
      };
      const done = (): void => signal?.removeEventListener("abort", onAbort);
      const sent = session.send(id, method, params as Record<string, unknown>, {
        onEvent,
        resolve: (result) => (done(), resolve(result as T)),
        reject: (error) => (done(), reject(error)),
      });
      if (!sent) reject(this.supervisor.failure);
      else signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private onStderr(line: string): void {
    this.emit("stderr", line);
    const record = parseLogRecord(line);
    const { logger } = this.options;
    if (record !== null) {
      this.emit("log", record);
      // The host's logger stamps its own time and pid: the child's go under other names.
      const { level, msg, time, pid, hostname: _host, ...fields } = record;
      if (logger !== undefined) logAt(logger, level)({ ...fields, source: "local-ai", child_pid: pid, child_time: time }, msg);
    } else {
      logger?.warn({ line, source: "local-ai" }, "local-ai stderr");
    }
  }
}

/** Races a wait against the caller's signal (the wait itself goes on for others). */
function abortable(promise: Promise<ClientSession>, signal: AbortSignal | undefined, error: () => LocalAiError): Promise<ClientSession> {
  if (signal === undefined) return promise;
  return new Promise<ClientSession>((resolve, reject) => {
    const onAbort = (): void => reject(error());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => (signal.removeEventListener("abort", onAbort), resolve(value)),
      (failure: unknown) => (signal.removeEventListener("abort", onAbort), reject(failure instanceof Error ? failure : new Error(String(failure)))),
    );
  });
}
