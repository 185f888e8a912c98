import type { McpRemoteServerConfig, McpServerEntry } from "../../config/schema.js";

/**
 * Any server the MCP client can talk to: a child process over stdio, or a remote one over HTTP
 * (`http` is the MCP Streamable HTTP transport, `sse` the older HTTP+SSE one; both are the MCP
 * SDK's own clients). The config's entries, and what an ACP editor passes in `session/new`.
 */
export type McpServerSpec = McpServerEntry;
export type { McpRemoteServerConfig };
export { isRemoteServer } from "../../config/mcp-server-kind.js";
