import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../logging/create-logger.js";
import { raceAbort } from "../../shared/abort.js";
import { cancelledResult, errorResult, timeoutResult } from "../tool-results.js";
import type { ToolCallOptions, ToolCallResult, ToolProgress } from "../tool-types.js";
import { ElicitationAskers } from "./elicitation-askers.js";
import { toToolCallResult } from "./call-result.js";
import type { McpAuth } from "./oauth/mcp-auth.js";
import { isRemoteServer, type McpServerSpec } from "./mcp-server-spec.js";
import { closeSession, errorText, listAllTools, openSession, withStderr, type McpListKind, type McpSession } from "./mcp-session.js";
import { ReconnectBackoff } from "./reconnect-backoff.js";
import type { RemoteAddressPolicy } from "./remote-address-policy.js";
import { RemoteFailure, untrustedFailureText } from "./remote-failure.js";
import { droppedMessage } from "./remote-drop.js";

export type McpServerState = "idle" | "starting" | "ready" | "crashed" | "restarting" | "failed" | "closed";

export interface McpConnectionDeps {
  logger: Logger;
  env: Readonly<Record<string, string | undefined>>;
  maxOutputBytes: number;
  /** Bound on starting the server and listing its tools (not on calls: those use timeout_ms). */
  startTimeoutMs: number;
  /** OAuth for remote servers (absent: none is attempted). */
  auth?: McpAuth;
  /** The server's tool list was fetched again after it announced a change (`tools` is the new list). */
  onToolsChanged?: (connection: McpConnection) => void;
  /** The server announced a change of its prompts (`notifications/prompts/list_changed`). */
  onPromptsChanged?: (connection: McpConnection) => void;
  /** How long a server's `elicitation/create` waits for an answer before it is declined (default 600 s). */
  elicitationTimeoutMs?: number;
  /**
   * A remote server a request named, not the operator: connected only to addresses the policy
   * allows, and its failures are said in our words everywhere (results, status, logs above debug).
   */
  untrusted?: RemoteAddressPolicy;
}

/**
 * One configured server across its lifetime: first start, calls, crash, lazy restart, close.
 *
 * Crash handling: when the process dies, the crash is reported once to the model (an in-flight
 * call, or else the next call, gets status error, retryable, with the server's last stderr
 * lines) and that same use starts a restart in the background, so the call after it finds the
 * server back. A server nobody calls is not restarted, so a crash-looping server cannot spin.
 */
export class McpConnection {
  state: McpServerState = "idle";
  /** Why it failed or crashed last; kept after a restart for status(). */
  lastError: string | undefined;
  tools: Tool[] = [];
  /** Set once the first start listed the tools: from then on they are offered, across crashes and restarts. */
  listed = false;
  private session: McpSession | undefined;
  /** The fetch a `tools/list_changed` started; the next model step waits for it (see refreshed()). */
  private refreshing: Promise<void> | undefined;
  private opening: Promise<McpSession> | undefined;
  private crashUnreported = false;
  private readonly sessions = new Set<McpSession>();
  private readonly logger: Logger;
  /** Spaces reconnects to a remote server that keeps failing (a child restarts only when called). */
  private readonly backoff = new ReconnectBackoff();
  /** The in-flight calls that can ask their user: the server's questions go to the newest. */
  private readonly askers: ElicitationAskers;

  constructor(
    readonly server: string,
    readonly config: McpServerSpec,
    private readonly deps: McpConnectionDeps,
  ) {
    this.logger = deps.logger;
    this.askers = new ElicitationAskers(server, deps.logger, deps.elicitationTimeoutMs);
  }

  get pid(): number | null {
    return this.session?.pid ?? null;
  }

  /** Spawns, handshakes and lists the tools. Rejects (state failed) when the server cannot start. */
  async start(): Promise<Tool[]> {
    if (this.isClosed()) throw new Error("the tool provider is closed");
    this.state = "starting";
    try {
      const session = await this.open();
      this.tools = await listAllTools(session, this.deps.startTimeoutMs, this.logger);
      if (this.isClosed()) return [];
      if (session.closed) throw new RemoteFailure(withStderr(`server "${this.server}" exited right after listing its tools`, session));
      this.session = session;
      this.state = "ready";
      this.listed = true;
      this.logger.info({ pid: session.pid, tools: this.tools.length }, "MCP server ready");
      return this.tools;
    } catch (error) {
      if (!this.isClosed()) {
        this.state = "failed";
        this.lastError = this.describe(error);
      }
      await this.closeAll();
      throw this.deps.untrusted === undefined ? error : new Error(this.describe(error));
    }
  }

  /** `label` is the name the model knows the tool by, for messages; `elicit` answers the server's questions meanwhile. */
  async call(remoteName: string, args: Record<string, unknown>, signal: AbortSignal | undefined, label = remoteName, onProgress?: (progress: ToolProgress) => void, elicit?: ToolCallOptions["elicit"]): Promise<ToolCallResult> {
    if (signal?.aborted === true) return cancelledResult();
    return this.askers.during(elicit, () => this.callTool(remoteName, args, signal, label, onProgress));
  }

  private async callTool(remoteName: string, args: Record<string, unknown>, signal: AbortSignal | undefined, label: string, onProgress?: (progress: ToolProgress) => void): Promise<ToolCallResult> {
    let session: McpSession;
    try {
      // A restart is bounded by the start timeout, not timeout_ms: timeout_ms is how long the
      // tool may run, and a server that takes longer to start than that must still come back.
      session = await this.ready(signal);
    } catch (error) {
      return isAborted(signal) ? cancelledResult() : this.failure(error, await sdkTypes());
    }
    const timeoutMs = this.config.timeout_ms;
    const deadline = AbortSignal.timeout(timeoutMs);
    const combined = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
    try {
      // The SDK sends notifications/cancelled to the server when `combined` aborts.
      const onprogress = (report: ToolProgress): void => {
        this.logger.debug({ tool: remoteName, progress: report.progress, total: report.total, message: report.message }, "MCP tool progress");
        onProgress?.({ progress: report.progress, ...(report.total === undefined ? {} : { total: report.total }), ...(report.message === undefined ? {} : { message: report.message }) });
      };
      // Progress does not extend timeout_ms: it bounds the whole run, as documented.
      const result = await session.client.callTool({ name: remoteName, arguments: args }, undefined, { signal: combined, timeout: timeoutMs, onprogress });
      return toToolCallResult(result, this.deps.maxOutputBytes);
    } catch (error) {
      if (isAborted(signal)) return cancelledResult();
      const { ErrorCode, McpError } = await sdkTypes();
      if (deadline.aborted || (error instanceof McpError && error.code === Number(ErrorCode.RequestTimeout))) {
        return timeoutResult(label, timeoutMs);
      }
      return this.failure(error, { ErrorCode, McpError });
    }
  }

  /** Settles once the tool lists that announced changes started are fetched (never rejects). */
  refreshed(): Promise<void> {
    return this.refreshing ?? Promise.resolve();
  }

  /**
   * A change announced by the live session: its tools are listed again (one fetch at a time; a
   * change announced during a fetch fetches once more after it). Prompts and resources are
   * listed on demand: a prompts change is passed on (ACP's commands follow it), resources are logged.
   */
  private onListChanged(session: McpSession, list: McpListKind): void {
    if (session !== this.session || this.isClosed()) return;
    this.logger.info({ list }, "MCP server announced a list change");
    if (list === "prompts") this.deps.onPromptsChanged?.(this);
    if (list !== "tools") return;
    const previous = this.refreshing ?? Promise.resolve();
    const refresh = previous.then(() => this.refreshTools(session));
    this.refreshing = refresh;
    void refresh.then(() => {
      if (this.refreshing === refresh) this.refreshing = undefined;
    });
  }

  private async refreshTools(session: McpSession): Promise<void> {
    if (session !== this.session || this.isClosed()) return;
    try {
      const tools = await listAllTools(session, this.deps.startTimeoutMs, this.logger);
      if (session !== this.session || this.isClosed()) return;
      this.tools = tools;
      this.logger.info({ tools: tools.map((tool) => tool.name) }, "MCP tool list changed");
      this.deps.onToolsChanged?.(this);
    } catch (error) {
      // The old list stays: a call to a tool that is gone gets the server's own error.
      this.logger.warn({ err: this.loggable(error) }, "listing the MCP server's tools again failed; the previous list stays");
    }
  }

  /** What the server declared in the handshake (prompts, resources...); undefined before it. */
  get capabilities(): ReturnType<McpSession["client"]["getServerCapabilities"]> {
    return this.session?.client.getServerCapabilities();
  }

  logFailure(request: string, error: unknown): void {
    this.logger.warn({ err: this.loggable(error), request }, "MCP server request failed");
  }

  /**
   * The live session's SDK client, for requests other than tool calls (prompts, resources): the
   * server is (re)started as a call would; a crash is reported by the next tool call, not here.
   */
  async liveClient(signal: AbortSignal | undefined): Promise<McpSession["client"]> {
    if (this.state === "crashed") this.restartIfDown();
    return (await this.ready(signal)).client;
  }

  /** A method, not a comparison, so TypeScript does not keep a narrowing across awaits. */
  private isClosed(): boolean {
    return this.state === "closed";
  }

  async close(): Promise<void> {
    this.state = "closed";
    await this.closeAll();
  }

  private failure(error: unknown, { ErrorCode, McpError }: SdkTypes): ToolCallResult {
    if (this.state === "closed") return errorResult("the tool provider is closed", false);
    if (error instanceof CrashReport) return errorResult(error.message, true);
    const connectionLost = error instanceof McpError && error.code === Number(ErrorCode.ConnectionClosed);
    if (connectionLost || this.state === "crashed") {
      // The crash was noticed by this in-flight call: it is the report; restart for the next.
      this.crashUnreported = false;
      this.restartIfDown();
      return errorResult(this.lastError ?? `server "${this.server}" closed the connection`, true);
    }
    if (this.state === "failed" || this.state === "restarting") return errorResult(this.describe(error), true);
    return errorResult(this.describe(error), false);
  }

  /** A failure's text: the server's own words for a configured server, ours for an untrusted one. */
  private describe(error: unknown): string {
    return this.deps.untrusted === undefined ? errorText(error) : untrustedFailureText(error);
  }

  /** What a log above debug may carry of an error (an untrusted server's words stay out). */
  private loggable(error: unknown): unknown {
    if (this.deps.untrusted === undefined) return error;
    this.logger.debug({ err: error }, "untrusted MCP server failure");
    return new Error(this.describe(error));
  }

  private async ready(signal: AbortSignal | undefined): Promise<McpSession> {
    if (this.state === "closed") throw new Error("the tool provider is closed");
    if (this.state === "ready" && this.session !== undefined) return this.session;
    // A remote server's drop is reported by the call that saw it; the next call just reconnects.
    if (this.state === "crashed" && this.crashUnreported && !isRemoteServer(this.config)) {
      this.crashUnreported = false;
      this.restartIfDown();
      throw new CrashReport(this.lastError ?? `server "${this.server}" exited`);
    }
    return raceAbort(this.opening ?? this.restart(), signal);
  }

  /**
   * Starts a restart for the calls to come, unless one runs or a call already brought the server
   * back (a stale in-flight call must not replace a live session). Failures are handled inside
   * restart() and reported by the next call, hence `void`.
   */
  private restartIfDown(): void {
    if (this.state === "crashed" || this.state === "failed") void this.restart();
  }

  /** Reconnects once (shared by all callers meanwhile); failures are reported by the calls. */
  private restart(): Promise<McpSession> {
    if (this.opening !== undefined) return this.opening;
    this.state = "restarting";
    this.logger.info("restarting MCP server");
    const remote = isRemoteServer(this.config);
    // Nothing is opened once closed: a close() during the backoff would never see that session.
    const opening = (remote ? this.backoff.wait() : Promise.resolve()).then(() => (this.isClosed() ? Promise.reject(new Error("the tool provider is closed")) : this.open())).then(
      (session) => {
        this.opening = undefined;
        this.backoff.succeeded();
        if (this.isClosed()) throw new Error("the tool provider is closed");
        this.session = session;
        this.state = "ready";
        this.logger.info({ pid: session.pid }, "MCP server restarted");
        return session;
      },
      (error: unknown) => {
        this.opening = undefined;
        if (remote) this.backoff.failed();
        if (!this.isClosed()) {
          this.state = "failed";
          this.lastError = this.describe(error);
          this.logger.warn({ err: this.loggable(error) }, "MCP server restart failed");
        }
        throw error;
      },
    );
    // Started by one call on behalf of the next ones: nobody may be waiting when it fails.
    opening.catch(() => undefined);
    this.opening = opening;
    return opening;
  }

  private open(): Promise<McpSession> {
    // Failed attempts dispose of themselves; forget them so repeated restarts do not pile up.
    for (const session of this.sessions) if (session.disposed) this.sessions.delete(session);
    return openSession(
      {
        server: this.server,
        config: this.config,
        env: this.deps.env,
        logger: this.logger,
        startTimeoutMs: this.deps.startTimeoutMs,
        onClose: (session) => this.onClosed(session),
        authProvider: isRemoteServer(this.config) ? this.deps.auth?.providerFor(this.server, this.config) : undefined,
        onListChanged: (session, list) => this.onListChanged(session, list),
        onElicit: (request, signal) => this.askers.ask(request, signal),
        untrusted: this.deps.untrusted,
      },
      (session) => this.sessions.add(session),
    );
  }

  private onClosed(session: McpSession): void {
    if (session !== this.session || this.state === "closed") return;
    this.session = undefined;
    this.state = "crashed";
    this.crashUnreported = true;
    this.lastError = isRemoteServer(this.config)
      ? droppedMessage(this.server, session.transport)
      : withStderr(`server "${this.server}" exited unexpectedly (pid ${session.pid ?? "unknown"}); it is restarted for the next call`, session);
    this.logger.warn({ pid: session.pid }, "MCP server exited unexpectedly");
    // The process is gone, but the SDK transport still holds its pipes.
    this.sessions.delete(session);
    closeSession(session, this.logger).catch(() => undefined);
  }

  private async closeAll(): Promise<void> {
    const sessions = [...this.sessions];
    this.sessions.clear();
    this.session = undefined;
    await Promise.all(sessions.map((session) => closeSession(session, this.logger)));
  }
}

/** A function, so TypeScript does not keep the narrowing from the first check across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** A crash noticed between calls, reported by the next call. */
class CrashReport extends Error {}

type SdkTypes = Pick<typeof import("@modelcontextprotocol/sdk/types.js"), "ErrorCode" | "McpError">;

/** The SDK's error classes, for telling errors apart; imported when needed (the SDK stays off start-up paths). */
function sdkTypes(): Promise<SdkTypes> {
  return import("@modelcontextprotocol/sdk/types.js");
}
