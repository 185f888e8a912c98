import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** A request the MCP server received: its method, the JSON-RPC method it carried (POST), its headers. */
export interface DiceMcpRequest {
  method: string;
  rpc: string | null;
  headers: IncomingHttpHeaders;
}

export interface DiceMcpServer {
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  /** Every HTTP request, in order (an empty list: nobody connected). */
  requests: DiceMcpRequest[];
  /** The tool calls it ran: name and arguments. */
  calls: Array<{ name: string; args: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * A real Streamable HTTP MCP server (the SDK's McpServer and StreamableHTTPServerTransport, one
 * session per client) on 127.0.0.1 with two tools: `roll_dice` ({sides}) answers "rolled <n> on a
 * d<sides>" with n = sides - 1, and `add` ({a, b}) answers the sum.
 */
export async function startDiceMcpServer(): Promise<DiceMcpServer> {
  const requests: DiceMcpRequest[] = [];
  const calls: DiceMcpServer["calls"] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const newServer = (): McpServer => {
    const server = new McpServer({ name: "dice", version: "1.0.0" });
    server.registerTool("roll_dice", { description: "Rolls a die", inputSchema: { sides: z.number().int().min(2) } }, ({ sides }) => {
      calls.push({ name: "roll_dice", args: { sides } });
      return { content: [{ type: "text", text: `rolled ${sides - 1} on a d${sides}` }] };
    });
    server.registerTool("add", { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => {
      calls.push({ name: "add", args: { a, b } });
      return { content: [{ type: "text", text: String(a + b) }] };
    });
    return server;
  };
  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const body: unknown = text === "" ? undefined : JSON.parse(text);
      requests.push({ method: req.method ?? "", rpc: (body as { method?: string } | undefined)?.method ?? null, headers: req.headers });
      const sessionId = req.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
      if (transport === undefined) {
        if (req.method !== "POST" || typeof sessionId === "string") {
          res.writeHead(404).end();
          return;
        }
        const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, created) });
        created.onclose = () => {
          if (created.sessionId !== undefined) transports.delete(created.sessionId);
        };
        transport = created;
        await newServer().connect(created);
      }
      await transport.handleRequest(req, res, body);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    calls,
    close: async () => {
      await Promise.allSettled([...transports.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
