import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, JSONRPCRequest, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import type { McpRemoteServerConfig } from "../../config/schema.js";
import type { Logger } from "../../logging/create-logger.js";
import { pinnedFetch } from "./pinned-fetch.js";
import type { RemoteAddressPolicy } from "./remote-address-policy.js";
import { jsonRpcErrorWords, requestFailure } from "./remote-failure.js";

export interface RemoteTransportOptions {
  config: McpRemoteServerConfig;
  logger: Logger;
  /** OAuth for a server that answers 401 (none when the config sets its own Authorization header). */
  authProvider?: OAuthClientProvider;
  /** Bound on re-initializing a session the server forgot. */
  timeoutMs: number;
  /**
   * A server someone other than the operator named (a request's `mcp` tool): every request goes
   * to an address the policy checked, Streamable HTTP only (no HTTP+SSE fallback: its GET would
   * read whatever the URL serves), and what the server answers on failure is never passed on:
   * failures and JSON-RPC errors are reported in our words (remote-failure.ts).
   */
  untrusted?: RemoteAddressPolicy;
}

/**
 * The SDK's Streamable HTTP (or HTTP+SSE) client transport, with what a long-lived connection to
 * a remote server needs on top (docs/tools.md):
 * - a server that answers the first Streamable HTTP request with a 4xx other than 401/403 is tried
 *   again with the legacy HTTP+SSE transport (the SDK's documented backwards compatibility),
 *   except an untrusted one (see `untrusted`);
 * - a session the server no longer knows (404, or 400 naming the session: it restarted) is
 *   initialized again with the same initialize request and the message resent, once: the server
 *   never ran it, so nothing runs twice;
 * - a server that cannot be reached (refused, reset), or a response stream cut while requests
 *   wait for their answers, ends the connection: the calls in flight fail at once (rather than at
 *   their timeout) and McpConnection reconnects on the next call. A cut of the idle notification
 *   stream alone ends nothing: the next request finds out.
 */
export class RemoteTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  /** Why the connection ended, for the message the model gets. */
  dropReason: string | undefined;
  private current: Transport;
  private kind: "http" | "sse";
  private established = false;
  private ended = false;
  private initializeRequest: JSONRPCRequest | undefined;
  private protocolVersion: string | undefined;
  private reinitializing: Promise<void> | undefined;
  private reinitCount = 0;
  /** Requests sent and not answered yet. */
  private readonly waiting = new Set<string | number>();

  constructor(private readonly options: RemoteTransportOptions) {
    this.kind = options.untrusted === undefined ? options.config.transport : "http";
    this.current = this.attach(this.create(this.kind));
  }

  get sessionId(): string | undefined {
    return this.current.sessionId;
  }

  /** The transport in use: `sse` after a fallback. */
  get transportKind(): "http" | "sse" {
    return this.kind;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
    this.current.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    await this.current.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.options.untrusted === undefined) return this.sendOnce(message, options);
    try {
      await this.sendOnce(message, options);
    } catch (error) {
      throw requestFailure(error);
    }
  }

  private async sendOnce(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ("method" in message && message.method === "initialize" && "id" in message) this.initializeRequest = message;
    if ("method" in message && "id" in message) this.waiting.add(message.id);
    const used = this.current;
    try {
      await used.send(message, options);
      this.established = true;
    } catch (error) {
      if (!this.established && this.kind === "http" && this.options.untrusted === undefined && isFallbackStatus(error)) {
        await this.fallBackToSse(error as StreamableHTTPError);
        await this.current.send(message, options);
        this.established = true;
        return;
      }
      if (this.established && isSessionGone(error) && this.initializeRequest !== undefined) {
        await this.reinitialize(used);
        await this.current.send(message, options);
        return;
      }
      if (isUnreachable(error)) this.drop(this.options.untrusted === undefined ? `${NOT_REACHED.has(causeText(error)) ? "server unreachable" : "connection lost"}: ${causeText(error)}` : requestFailure(error).message);
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.current.close().catch(() => undefined);
    this.finish();
  }

  private create(kind: "http" | "sse"): Transport {
    const { config, authProvider, untrusted } = this.options;
    const shared = { requestInit: { headers: config.headers }, ...(authProvider === undefined ? {} : { authProvider }), ...(untrusted === undefined ? {} : { fetch: pinnedFetch(untrusted) }) };
    return kind === "sse" ? new SSEClientTransport(new URL(config.url), shared) : new StreamableHTTPClientTransport(new URL(config.url), shared);
  }

  private attach(transport: Transport): Transport {
    transport.onmessage = (message, extra) => {
      if (!("method" in message) && "id" in message && message.id !== undefined) this.waiting.delete(message.id);
      this.onmessage?.(this.passable(message), extra);
    };
    transport.onerror = (error) => {
      this.onerror?.(error);
      // The SDK resumes only streams that sent an event id; the others would leave calls waiting.
      if (this.waiting.size > 0 && /^SSE stream disconnected/.test(error.message)) this.drop(`the server cut the response stream: ${error.message.replace(/^SSE stream disconnected: /, "")}`);
    };
    transport.onclose = () => this.finish();
    return transport;
  }

  /** Quietly retires a transport that is replaced: its close must not end this connection. */
  private retire(transport: Transport): void {
    transport.onclose = undefined;
    transport.onmessage = undefined;
    transport.onerror = undefined;
    transport.close().catch(() => undefined);
  }

  private async fallBackToSse(error: StreamableHTTPError): Promise<void> {
    this.options.logger.info({ status: error.code }, "server answered Streamable HTTP with a 4xx; trying the legacy HTTP+SSE transport");
    this.retire(this.current);
    this.kind = "sse";
    this.current = this.attach(this.create("sse"));
    await this.current.start();
  }

  /** One re-initialization shared by every request that found the session gone meanwhile. */
  private reinitialize(failed: Transport): Promise<void> {
    if (failed !== this.current) return Promise.resolve();
    this.reinitializing ??= this.openNewSession().finally(() => {
      this.reinitializing = undefined;
    });
    return this.reinitializing;
  }

  private async openNewSession(): Promise<void> {
    const request = this.initializeRequest as JSONRPCRequest;
    const id = `local-ai-reinitialize-${++this.reinitCount}`;
    this.options.logger.info("the server no longer knows our session (it restarted?); initializing a new one");
    const next = this.create(this.kind);
    const answered = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not answer a new initialize within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
      next.onmessage = (message, extra) => {
        if ("id" in message && message.id === id) {
          clearTimeout(timer);
          if ("error" in message) reject(new Error(`the server refused a new initialize: ${this.options.untrusted === undefined ? message.error.message : jsonRpcErrorWords(message.error.code)}`));
          else resolve();
          return;
        }
        this.onmessage?.(this.passable(message), extra);
      };
    });
    next.onerror = (error) => this.onerror?.(error);
    await next.start();
    await next.send({ ...request, id });
    await answered;
    if (this.protocolVersion !== undefined) next.setProtocolVersion?.(this.protocolVersion);
    await next.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    this.retire(this.current);
    this.current = this.attach(next);
  }

  /** An untrusted server's JSON-RPC error answer says its code only (its message and data are its own words). */
  private passable<T extends JSONRPCMessage>(message: T): T {
    if (this.options.untrusted === undefined || !("error" in message)) return message;
    return { ...message, error: { code: message.error.code, message: jsonRpcErrorWords(message.error.code) } };
  }

  private drop(reason: string): void {
    if (this.ended) return;
    this.dropReason = reason;
    this.retire(this.current);
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.onclose?.();
  }
}

/** Causes that mean the server was never reached (else the connection broke under the request). */
const NOT_REACHED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** 4xx from the first Streamable HTTP request, except the auth answers (the OAuth flow handles those). */
function isFallbackStatus(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400 && error.code < 500 && error.code !== 401 && error.code !== 403;
}

function isSessionGone(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}

/** fetch() failed below HTTP: refused, reset, DNS. */
function isUnreachable(error: unknown): boolean {
  return error instanceof TypeError && /fetch failed/i.test(error.message);
}

function causeText(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
