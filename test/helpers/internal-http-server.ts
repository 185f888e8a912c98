import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What every answer of the internal server carries somewhere: it must never come back to a client. */
export const INTERNAL_SECRET = "INTERNAL-SECRET";

export interface InternalServer {
  port: number;
  /** http://127.0.0.1:<port><path> */
  url(path: string): string;
  /** Every HTTP request it received, in order. */
  requests: Array<{ method: string; path: string }>;
  close(): Promise<void>;
}

/**
 * An "internal service" on 127.0.0.1 that a request's `mcp` tool may name, one behaviour per path,
 * each answer carrying INTERNAL_SECRET:
 * - `/html-500`: 500 with an HTML error page;
 * - `/rpc-error`: a JSON-RPC error answer (message and data) to any POST;
 * - `/post-404`: 404 to POST, and to GET an event stream (what an HTTP+SSE fallback would read);
 * - `/not-jsonrpc`: 200 with JSON that is not JSON-RPC;
 * - `/call-error`: a minimal MCP server (JSON answers) with a tool `peek` whose tools/call is a
 *   JSON-RPC error; its standalone-stream GET gets 405.
 */
export async function startInternalServer(): Promise<InternalServer> {
  const requests: InternalServer["requests"] = [];
  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0] ?? "";
      requests.push({ method: req.method ?? "", path });
      const text = Buffer.concat(chunks).toString("utf8");
      answer(path, req, res, text === "" ? undefined : (JSON.parse(text) as Rpc));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}

interface Rpc {
  id?: number | string;
  method?: string;
  params?: { protocolVersion?: string };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
}

function answer(path: string, req: IncomingMessage, res: ServerResponse, rpc: Rpc | undefined): void {
  const rpcError = (): void => json(res, 200, { jsonrpc: "2.0", id: rpc?.id ?? null, error: { code: -32603, message: `${INTERNAL_SECRET}: rpc message`, data: { detail: `${INTERNAL_SECRET}: rpc data` } } });
  if (path === "/html-500") {
    res.writeHead(500, { "Content-Type": "text/html" }).end(`<html><body><h1>Internal error</h1><pre>${INTERNAL_SECRET}: db password hunter2</pre></body></html>`);
  } else if (path === "/rpc-error") {
    rpcError();
  } else if (path === "/post-404" && req.method === "GET") {
    res.writeHead(200, { "Content-Type": "text/event-stream" }).end(`event: endpoint\ndata: /post-404/messages?${INTERNAL_SECRET}\n\n`);
  } else if (path === "/post-404") {
    res.writeHead(404, { "Content-Type": "text/plain" }).end(`${INTERNAL_SECRET}: no such page`);
  } else if (path === "/not-jsonrpc") {
    json(res, 200, { [INTERNAL_SECRET]: "config dump" });
  } else if (path === "/call-error" && req.method === "POST") {
    if (rpc?.id === undefined) res.writeHead(202).end();
    else if (rpc.method === "initialize") json(res, 200, { jsonrpc: "2.0", id: rpc.id, result: { protocolVersion: rpc.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "internal", version: "1.0.0" } } });
    else if (rpc.method === "tools/list") json(res, 200, { jsonrpc: "2.0", id: rpc.id, result: { tools: [{ name: "peek", description: "Peeks", inputSchema: { type: "object" } }] } });
    else rpcError();
  } else {
    res.writeHead(405).end();
  }
}
