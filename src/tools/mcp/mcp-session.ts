import type { Readable } from "node:stream";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerConfig } from "../../config/schema.js";
import type { Logger } from "../../logging/create-logger.js";
import { killTree } from "../../shared/process/kill-tree.js";
import { hostProcessPlatform, type ProcessPlatform } from "../../shared/process/process-platform.js";
import { ensureExited } from "../../shared/process/terminate.js";
import { isRemoteServer, type McpRemoteServerConfig, type McpServerSpec } from "./mcp-server-spec.js";
import type { RemoteAddressPolicy } from "./remote-address-policy.js";
import { RemoteFailure, untrustedFailureText } from "./remote-failure.js";
import { mcpServerEnv } from "./server-env.js";
import type { ElicitationAnswer } from "../tool-types.js";
import { StderrTail } from "./stderr-lines.js";

const CLIENT_INFO = { name: "local-ai", version: "0.1.0" };

/** One spawned server process (or remote connection) and the SDK client talking to it. A restart makes a new one. */
export interface McpSession {
  client: Client;
  transport: Transport;
  /** A spawned server's stderr; null for a remote one. */
  stderr: StderrTail | null;
  /** A spawned server's pid; null for a remote one (or before the spawn). */
  pid: number | null;
  /** Set once the connection ended (crash or close), whoever noticed first. */
  closed: boolean;
  /** Set once closeSession ran, so a second close does not signal a pid that may be reused. */
  disposed: boolean;
}

export interface OpenSessionOptions {
  server: string;
  config: McpServerSpec;
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** Bound on spawn + handshake (the per-call timeout_ms may be far too short for `npx -y`). */
  startTimeoutMs: number;
  /** Called when the connection ends for any reason (the SDK's onclose). */
  onClose: (session: McpSession) => void;
  /** OAuth for a remote server (McpAuth); none for stdio or a server with its own Authorization header. */
  authProvider?: OAuthClientProvider | undefined;
  /**
   * A `notifications/<list>/list_changed` from the server. The SDK dispatches it before a
   * response that follows it on the wire settles its request, so a refresh started here is known
   * before the tool call that caused it returns.
   */
  onListChanged?: (session: McpSession, list: McpListKind) => void;
  /** A form-mode `elicitation/create`; without it the client declares no elicitation capability. */
  onElicit?: (request: { message: string; requestedSchema: Record<string, unknown> }, signal: AbortSignal) => Promise<ElicitationAnswer>;
  /** A remote server a request named: checked addresses, Streamable HTTP only, failures in our words (RemoteTransport). */
  untrusted?: RemoteAddressPolicy | undefined;
}

/** The lists a server may announce changes of. */
export type McpListKind = "tools" | "prompts" | "resources";

/**
 * Spawns the server over stdio (or connects to a remote one) and runs the MCP handshake, bounded
 * by startTimeoutMs. On failure the child is ended and the error message carries the server's
 * last stderr lines, which usually say why (bad arguments, missing module, a stack trace).
 */
export async function openSession(options: OpenSessionOptions, register: (session: McpSession) => void): Promise<McpSession> {
  const { server, config, logger } = options;
  // The MCP SDK (~150 ms of imports) loads with the first server started, never at process start.
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { transport, stderr } = isRemoteServer(config) ? { transport: await remoteTransport(config, options), stderr: null } : await stdioTransport(config, options.env, logger);
  // Form mode only: URL mode would send the user to a page the server chose.
  const client = new Client(CLIENT_INFO, { capabilities: options.onElicit === undefined ? {} : { elicitation: { form: {} } } });
  const session: McpSession = { client, transport, stderr, pid: null, closed: false, disposed: false };
  // Registered before spawning, so a close() racing with the handshake still ends this child.
  register(session);
  client.onerror = (error) => logger.debug({ err: error }, "MCP transport error");
  const { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema, PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema, ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
  const onElicit = options.onElicit;
  if (onElicit !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const params = request.params;
      // The SDK refuses URL mode already (not declared); the check narrows the type.
      if (params.mode === "url") return { action: "decline" };
      const answer = await onElicit({ message: params.message, requestedSchema: params.requestedSchema }, extra.signal);
      return answer.action === "accept" ? { action: "accept" as const, content: answer.content ?? {} } : { action: answer.action };
    });
  }
  // A server's own log messages (notifications/message) go to our log at debug, never to stdout.
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    const { level, logger: name, data } = notification.params;
    logger.debug({ level, ...(name === undefined ? {} : { logger: name }), data }, "MCP server log");
  });
  const onListChanged = options.onListChanged;
  if (onListChanged !== undefined) {
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => onListChanged(session, "tools"));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => onListChanged(session, "prompts"));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => onListChanged(session, "resources"));
  }
  client.onclose = () => {
    session.closed = true;
    options.onClose(session);
  };
  try {
    await client.connect(transport, { timeout: options.startTimeoutMs });
    session.pid = pidOf(transport);
    return session;
  } catch (error) {
    session.pid = pidOf(transport);
    await closeSession(session, logger);
    const { isLoginRequired } = await import("./oauth/login-required.js");
    // The login message stands alone: it says what to do.
    if (isLoginRequired(error)) throw error;
    if (options.untrusted !== undefined) {
      // The SDK's error may quote the server (its body, its message): it stays out of the error,
      // and so out of the logs above debug and out of what the client is told.
      logger.debug({ err: error }, "untrusted MCP server failed to start");
      // A server never reached ends the connection first (the SDK then says only "Connection closed").
      const dropped = "dropReason" in transport && typeof transport.dropReason === "string" ? transport.dropReason : undefined;
      throw new RemoteFailure(`server "${server}" failed to start: ${dropped ?? untrustedFailureText(error)}`);
    }
    throw new Error(withStderr(`server "${server}" failed to start: ${errorText(error)}`, session), { cause: error });
  }
}

async function stdioTransport(config: McpServerConfig, env: Readonly<Record<string, string | undefined>>, logger: Logger): Promise<{ transport: Transport; stderr: StderrTail }> {
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    env: mcpServerEnv(env, config.env),
    ...(config.cwd === null ? {} : { cwd: config.cwd }),
    // "pipe": the child's stderr must never reach our stderr raw, nor our stdout at all.
    stderr: "pipe",
  });
  const stderrStream = transport.stderr;
  // With stderr "pipe" the SDK hands out a PassThrough before spawning (typed as a plain Stream).
  if (stderrStream === null) throw new Error("the MCP SDK did not expose the server's stderr");
  return { transport, stderr: new StderrTail(stderrStream as Readable, logger) };
}

async function remoteTransport(config: McpRemoteServerConfig, options: OpenSessionOptions): Promise<Transport> {
  const { RemoteTransport } = await import("./remote-transport.js");
  return new RemoteTransport({
    config,
    logger: options.logger,
    timeoutMs: options.startTimeoutMs,
    ...(options.authProvider ? { authProvider: options.authProvider } : {}),
    ...(options.untrusted === undefined ? {} : { untrusted: options.untrusted }),
  });
}

/** The child's pid for a stdio transport; remote transports have none. */
function pidOf(transport: Transport): number | null {
  return "pid" in transport && typeof transport.pid === "number" ? transport.pid : null;
}

/** Every page of tools/list, minus tools that only run as tasks (plain tools/call cannot run them). */
export async function listAllTools(session: McpSession, timeoutMs: number, logger: Logger): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  do {
    const page = await session.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
    tools.push(...page.tools);
    cursor = page.nextCursor;
    // A server that hands out the same cursor again would otherwise loop forever.
    if (cursor !== undefined && seen.has(cursor)) break;
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor !== undefined);
  return tools.filter((tool) => {
    const taskOnly = tool.execution?.taskSupport === "required";
    if (taskOnly) logger.debug({ tool: tool.name }, "tool skipped: it only runs as an MCP task");
    return !taskOnly;
  });
}

/**
 * Ends the child (stdin EOF, SIGTERM, SIGKILL: the SDK's sequence) and waits until its pid is gone.
 * On Windows the SDK's kill ends only the direct child (`cmd.exe` for `npx`), orphaning the
 * `node.exe` under it: the whole tree is ended first there, while the parent still links it.
 */
export async function closeSession(session: McpSession, logger: Logger, platform: ProcessPlatform = hostProcessPlatform()): Promise<void> {
  if (session.disposed) return;
  session.disposed = true;
  session.closed = true;
  const pid = pidOf(session.transport) ?? session.pid;
  if (pid !== null && platform.os === "win32" && !(await killTree(pid, "SIGKILL", platform))) logger.warn({ pid }, "taskkill could not end the MCP server's process tree");
  try {
    await session.client.close();
  } catch (error) {
    logger.debug({ err: error }, "MCP client close failed");
  }
  if (pid !== null && !(await ensureExited(pid))) logger.warn({ pid }, "MCP server process did not exit");
}

export function withStderr(message: string, session: McpSession): string {
  const tail = session.stderr?.tail() ?? "";
  return tail === "" ? message : `${message}\nlast stderr lines:\n${tail}`;
}

export function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // The SDK prefixes "MCP error -32000: "; the code means nothing to the model or the user.
  return text.replace(/^MCP error -?\d+: /, "");
}
