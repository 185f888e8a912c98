import type { McpRemoteServerConfig, McpServerEntry } from "./schema.js";

/** An mcp.servers entry reached over HTTP (it has a `url`) rather than spawned. */
export function isRemoteServer(entry: McpServerEntry): entry is McpRemoteServerConfig {
  return "url" in entry;
}
