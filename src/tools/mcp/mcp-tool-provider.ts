import type { Logger } from "../../logging/create-logger.js";
import { raceAbort } from "../../shared/abort.js";
import { serverRequiresApproval } from "../approval-policy.js";
import { DEFAULT_MAX_OUTPUT_BYTES } from "../output-cap.js";
import { matchTools } from "../tool-glob.js";
import { assignToolNames } from "../tool-names.js";
import { errorResult, unknownToolResult } from "../tool-results.js";
import { LoginRequiredError } from "./oauth/login-required.js";
import type { McpAuth } from "./oauth/mcp-auth.js";
import type { McpContent, McpMessage, McpPromptInfo, McpResourceList, ToolCallOptions, ToolCallResult, ToolDescriptor, ToolProvider } from "../tool-types.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import { getPrompt, listPrompts, listResources, readResource } from "./mcp-catalog.js";
import { McpConnection, type McpServerState } from "./mcp-connection.js";
import type { McpServerSpec } from "./mcp-server-spec.js";
import type { RemoteAddressPolicy } from "./remote-address-policy.js";

const DEFAULT_START_TIMEOUT_MS = 60_000;

export interface McpToolProviderDeps {
  logger: Logger;
  /** Our environment, filtered by an allow-list before it reaches a server (default process.env). */
  env?: Record<string, string | undefined>;
  /** Cap on the text of one tool result (default 16 KiB); longer output is truncated with a marker. */
  maxOutputBytes?: number;
  /**
   * Bound on starting one server and listing its tools (default: the larger of its timeout_ms and
   * 60 s, the SDK's own default, since `npx -y` may download the server first).
   */
  startTimeoutMs?: number;
  /** OAuth for remote servers (tokens in data_dir); without it a server that answers 401 fails. */
  auth?: McpAuth;
  /** `mcp.elicitation_timeout_s` in ms (default 600 s). */
  elicitationTimeoutMs?: number;
  /**
   * The servers are untrusted: remote ones a request named (a Responses `mcp` tool), not the
   * operator. They connect only where the policy allows, over Streamable HTTP only, and their
   * failures are reported in our words, never the server's (McpConnectionDeps.untrusted).
   */
  untrusted?: RemoteAddressPolicy;
}

export interface McpServerStatus {
  server: string;
  state: McpServerState;
  /** The live child's pid, or null when none runs. */
  pid: number | null;
  /** Tools exposed from this server. */
  tools: number;
  /** Why it failed to start, crashed or failed to restart. */
  error?: string;
  /** A remote server that wants `local-ai mcp login <server>` first. */
  needsLogin?: boolean;
}

interface Entry {
  descriptor: ToolDescriptor;
  connection: McpConnection;
}

/**
 * Tools from MCP servers over stdio (docs/tools.md). `start` connects every server in parallel;
 * a server that fails is logged and left out (see `status()`), the others still serve. Names are
 * assigned after all servers answered, in config order, so they never depend on timing.
 */
export class McpToolProvider implements ToolProvider {
  private readonly connections: McpConnection[];
  private readonly entries = new Map<string, Entry>();
  private ordered: ToolDescriptor[] = [];
  private readonly promptListeners = new Set<() => void>();
  private starting: Promise<void> | undefined;
  private closed = false;
  private readonly logger: Logger;
  private readonly auth: McpAuth | undefined;

  constructor(servers: Record<string, McpServerSpec>, deps: McpToolProviderDeps) {
    this.logger = deps.logger.child({ component: "mcp" });
    this.auth = deps.auth;
    const env = deps.env ?? process.env;
    const maxOutputBytes = deps.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.connections = Object.entries(servers).map(
      ([server, config]) =>
        new McpConnection(server, config, {
          logger: this.logger.child({ server }),
          env,
          maxOutputBytes,
          startTimeoutMs: deps.startTimeoutMs ?? Math.max(config.timeout_ms, DEFAULT_START_TIMEOUT_MS),
          ...(deps.auth === undefined ? {} : { auth: deps.auth }),
          onToolsChanged: () => this.assignNames(),
          onPromptsChanged: () => {
            for (const listener of this.promptListeners) listener();
          },
          ...(deps.elicitationTimeoutMs === undefined ? {} : { elicitationTimeoutMs: deps.elicitationTimeoutMs }),
          ...(deps.untrusted === undefined ? {} : { untrusted: deps.untrusted }),
        }),
    );
  }

  /** Never rejects for a server that fails (see status()); rejects only when `signal` aborts this wait. */
  start(signal?: AbortSignal): Promise<void> {
    this.starting ??= this.startAll();
    return raceAbort(this.starting, signal);
  }

  list(patterns: readonly string[]): ToolDescriptor[] {
    return matchTools(this.ordered, patterns).tools;
  }

  status(): McpServerStatus[] {
    return this.connections.map((connection) => ({
      server: connection.server,
      state: connection.state,
      pid: connection.pid,
      tools: this.ordered.filter((tool) => tool.server === connection.server).length,
      ...(connection.lastError === undefined ? {} : { error: connection.lastError }),
      ...(this.auth?.needsLogin(connection.server) === true ? { needsLogin: true } : {}),
    }));
  }

  async call(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolCallResult> {
    if (this.closed) return errorResult("the tool provider is closed", false);
    try {
      await this.start(options.signal);
    } catch {
      return { status: "cancelled", content: "the tool call was cancelled", retryable: false };
    }
    const entry = this.entries.get(name);
    if (entry === undefined) return this.unknownTool(name);
    const started = Date.now();
    const result = await entry.connection.call(entry.descriptor.remoteName, args, options.signal, name, options.onProgress, options.elicit);
    this.logger.debug({ tool: name, server: entry.descriptor.server, status: result.status, ms: Date.now() - started }, "tool call");
    return result;
  }

  /** Servers left out because they want a login: the model is told how the user logs in. */
  missingToolNotes(): string[] {
    return this.connections.filter((connection) => this.auth?.needsLogin(connection.server) === true).map((connection) => new LoginRequiredError(connection.server).message);
  }

  /** A tool may be unknown because its server wants a login: then the result says how to log in. */
  private unknownTool(name: string): ToolCallResult {
    const result = unknownToolResult(name, [...this.entries.keys()]);
    const notes = this.missingToolNotes();
    return notes.length === 0 ? result : errorResult([result.content, ...notes].join("; "), false);
  }

  onPromptsChanged(listener: () => void): () => void {
    this.promptListeners.add(listener);
    return () => this.promptListeners.delete(listener);
  }

  /** The configured remote servers whose last connection attempt found no usable login. */
  needingLogin(): string[] {
    return this.connections.filter((connection) => !connection.listed && this.auth?.needsLogin(connection.server) === true).map((connection) => connection.server);
  }

  /**
   * Connects to a server again after a login made by this process (ACP): its tools are offered
   * from the next listing on. Rejects with the connection's error (a login still missing).
   */
  async reconnect(server: string): Promise<void> {
    await this.start();
    const connection = this.connections.find((candidate) => candidate.server === server);
    if (connection === undefined || this.closed) return;
    await connection.start();
    this.auth?.connected(server);
    this.assignNames();
  }

  mcpServers(): string[] {
    return this.connections.filter((connection) => connection.listed).map((connection) => connection.server);
  }

  async prompts(signal?: AbortSignal): Promise<McpPromptInfo[]> {
    await this.start(signal);
    return listPrompts(this.connections, signal);
  }

  async getPrompt(server: string, name: string, args: Record<string, string>, signal?: AbortSignal): Promise<McpMessage[]> {
    await this.start(signal);
    return getPrompt(this.connectionOf(server, "prompt.server"), name, args, signal);
  }

  async resources(signal?: AbortSignal): Promise<McpResourceList> {
    await this.start(signal);
    return listResources(this.connections, signal);
  }

  async readResource(server: string, uri: string, signal?: AbortSignal): Promise<McpContent[]> {
    await this.start(signal);
    return readResource(this.connectionOf(server, "server"), uri, signal);
  }

  private connectionOf(server: string, param: string): McpConnection {
    const connection = this.connections.find((candidate) => candidate.server === server);
    if (connection === undefined || !connection.listed) {
      const known = this.connections.filter((candidate) => candidate.listed).map((candidate) => candidate.server);
      throw new RuntimeError("invalid_params", `no MCP server "${server}" is running; running: ${known.join(", ") || "none"}`, { details: { param } });
    }
    return connection;
  }

  /** Waits for the tool lists that servers announced changes of (`notifications/tools/list_changed`). */
  async refreshed(signal?: AbortSignal): Promise<void> {
    await raceAbort(Promise.all(this.connections.map((connection) => connection.refreshed())), signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.connections.map((connection) => connection.close()));
  }

  private async startAll(): Promise<void> {
    // A start after close() must not spawn anything: close() promised no children.
    if (this.closed) return;
    const outcomes = await Promise.allSettled(this.connections.map((connection) => connection.start()));
    outcomes.forEach((outcome, index) => {
      const connection = this.connections[index] as McpConnection;
      if (outcome.status === "rejected" && connection.state !== "closed") {
        this.logger.error({ server: connection.server, err: outcome.reason }, "MCP server failed to start; its tools are unavailable");
      }
    });
    this.assignNames();
    this.warnUnknownApprovals();
  }

  /**
   * The exposed names of every ready server's tools, in config order (so they never depend on
   * timing); again whenever a server's list changes, so a clash resolves the same way it would
   * have at start.
   */
  private assignNames(): void {
    const remote = this.connections.filter((connection) => connection.listed).flatMap((connection) => connection.tools.map((tool) => ({ connection, tool })));
    const names = assignToolNames(remote.map(({ connection, tool }) => ({ server: connection.server, remoteName: tool.name })));
    this.entries.clear();
    remote.forEach(({ connection, tool }, index) => {
      const name = names[index] as string;
      const descriptor: ToolDescriptor = {
        name,
        ...(tool.description ?? tool.title ? { description: tool.description ?? tool.title } : {}),
        inputSchema: tool.inputSchema,
        server: connection.server,
        remoteName: tool.name,
        requiresApproval: serverRequiresApproval(connection.config.requires_approval, tool.name),
      };
      if (name !== tool.name) this.logger.info({ server: connection.server, tool: tool.name, exposed: name }, "MCP tool renamed");
      this.entries.set(name, { descriptor, connection });
    });
    this.ordered = [...this.entries.values()].map((entry) => entry.descriptor);
  }

  /** A requires_approval entry naming no tool is likely a typo, and a typo here disables a safeguard. */
  private warnUnknownApprovals(): void {
    for (const connection of this.connections) {
      const setting = connection.config.requires_approval;
      if (connection.state !== "ready" || typeof setting === "boolean") continue;
      const offered = new Set(connection.tools.map((tool) => tool.name));
      const unknown = setting.filter((name) => !offered.has(name));
      if (unknown.length > 0) {
        this.logger.warn({ server: connection.server, unknown }, "requires_approval names tools this server does not offer");
      }
    }
  }
}
