import type { McpServerConfig } from "../../config/schema.js";

/**
 * A server reached over HTTP rather than spawned: what an ACP editor may pass in `session/new`
 * (config.yaml's servers are stdio only). `http` is the MCP Streamable HTTP transport, `sse` the
 * older HTTP+SSE one; both are the MCP SDK's own clients.
 */
export interface McpRemoteServerConfig {
  transport: "http" | "sse";
  url: string;
  headers: Record<string, string>;
  requires_approval: boolean | string[];
  timeout_ms: number;
}

/** Any server the MCP client can talk to: a child process over stdio, or a remote one. */
export type McpServerSpec = McpServerConfig | McpRemoteServerConfig;

export function isRemoteServer(spec: McpServerSpec): spec is McpRemoteServerConfig {
  return "url" in spec;
}
