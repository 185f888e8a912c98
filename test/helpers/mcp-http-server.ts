import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import type { OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/**
 * A real Streamable HTTP MCP server on 127.0.0.1, built from the SDK's own server classes
 * (McpServer + StreamableHTTPServerTransport, one per session, as the SDK's examples do), in the
 * test's process so a test can stop it and start it again on the same port. Tools: `echo`
 * (`remote echo: <message>`), `whoami` (the client id of the bearer token, or "anonymous") and
 * `hold` (answers only once `release()` is called; `held()` resolves when a call arrives).
 * With `oauth`, the SDK's server auth guards /mcp: mcpAuthRouter (authorization server and
 * metadata) with the given provider, requireBearerAuth on /mcp.
 */
export interface McpHttpServer {
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  port: number;
  /** Every tool call served, as `<tool>:<message>`. */
  calls: string[];
  /** The `x-test` header of every POST (what the client's configured headers carried). */
  testHeaders: Array<string | undefined>;
  /** Sessions initialized since the server (first) started. */
  initializations: number;
  /** Ends the server and every connection (as a crash would); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Resolves once a `hold` call has arrived (the call is in flight). */
  held(): Promise<void>;
  /** Lets every waiting `hold` call answer. */
  release(): void;
}

type Middleware = (req: unknown, res: unknown, next: () => void) => void;
type Route = (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => void;

/** What is used of the express app the SDK makes (this repo has no express types). */
interface ExpressApp {
  use(handler: Middleware): void;
  post(path: string, ...handlers: Array<Middleware | Route>): void;
  get(path: string, ...handlers: Array<Middleware | Route>): void;
  delete(path: string, ...handlers: Array<Middleware | Route>): void;
  listen(port: number, host: string, callback: (error?: Error) => void): Server;
}

export async function startMcpHttpServer(options: { oauth?: OAuthServerProvider; port?: number } = {}): Promise<McpHttpServer> {
  const state = { calls: [] as string[], initializations: 0, testHeaders: [] as Array<string | undefined> };
  let releaseHeld: () => void = () => undefined;
  let releasing = new Promise<void>((resolve) => (releaseHeld = resolve));
  let arrived: () => void = () => undefined;
  let holdArrived = new Promise<void>((resolve) => (arrived = resolve));
  let port = options.port ?? 0;
  let server: Server | undefined;
  let transports = new Map<string, StreamableHTTPServerTransport>();

  const newMcpServer = (): McpServer => {
    const mcp = new McpServer({ name: "test-remote", version: "1.0.0" });
    mcp.registerTool("echo", { description: "Echoes the message", inputSchema: { message: z.string() } }, ({ message }) => {
      state.calls.push(`echo:${message}`);
      return { content: [{ type: "text", text: `remote echo: ${message}` }] };
    });
    mcp.registerTool("whoami", { description: "The caller's OAuth client id" }, (extra) => {
      state.calls.push("whoami:");
      return { content: [{ type: "text", text: extra.authInfo?.clientId ?? "anonymous" }] };
    });
    mcp.registerTool("hold", { description: "Answers once the test releases it" }, async () => {
      state.calls.push("hold:");
      arrived();
      await releasing;
      return { content: [{ type: "text", text: "released" }] };
    });
    return mcp;
  };

  const handle = async (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void> => {
    if (req.method === "POST") state.testHeaders.push(req.headers["x-test"] as string | undefined);
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (existing !== undefined) return existing.handleRequest(req, res, req.body);
    if (sessionId !== undefined) {
      // The spec's answer to a session this server does not know (it restarted).
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
      return;
    }
    if (req.method !== "POST" || !isInitializeRequest(req.body)) {
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: no session" }, id: null }));
      return;
    }
    const sessions = transports;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        state.initializations++;
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await newMcpServer().connect(transport);
    await transport.handleRequest(req, res, req.body);
  };

  const start = async (): Promise<void> => {
    transports = new Map();
    const app = createMcpExpressApp({ host: "127.0.0.1" }) as ExpressApp;
    const url = (): URL => new URL(`http://127.0.0.1:${port}/mcp`);
    // The auth routes need the issuer URL, hence the port: they are made once it listens.
    let authRouter: Middleware = (_req, _res, next) => next();
    let bearer: Middleware = (_req, _res, next) => next();
    const guard: Middleware[] = [];
    if (options.oauth !== undefined) {
      app.use((req: unknown, res: unknown, next: () => void) => authRouter(req, res, next));
      guard.push((req, res, next) => bearer(req, res, next));
    }
    for (const method of ["post", "get", "delete"] as const) {
      app[method]("/mcp", ...guard, (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
        handle(req, res).catch((error: unknown) => {
          if (!res.headersSent) res.writeHead(500).end(String(error));
        });
      });
    }
    server = await new Promise<Server>((resolve, reject) => {
      const listening: Server = app.listen(port, "127.0.0.1", (error?: Error) => (error ? reject(error) : resolve(listening)));
    });
    port = (server.address() as AddressInfo).port;
    if (options.oauth !== undefined) {
      authRouter = mcpAuthRouter({ provider: options.oauth, issuerUrl: new URL(`http://127.0.0.1:${port}/`), resourceServerUrl: url(), scopesSupported: ["mcp:tools"] });
      bearer = requireBearerAuth({ verifier: options.oauth, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(url()) });
    }
  };

  const stop = async (): Promise<void> => {
    const current = server;
    server = undefined;
    if (current === undefined) return;
    current.closeAllConnections();
    await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await start();
  return {
    get url() {
      return `http://127.0.0.1:${port}/mcp`;
    },
    get port() {
      return port;
    },
    calls: state.calls,
    testHeaders: state.testHeaders,
    get initializations() {
      return state.initializations;
    },
    stop,
    start,
    held: () => holdArrived,
    release: () => {
      releaseHeld();
      releasing = new Promise<void>((resolve) => (releaseHeld = resolve));
      holdArrived = new Promise<void>((resolve) => (arrived = resolve));
    },
  };
}
