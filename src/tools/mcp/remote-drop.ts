import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/** What the model reads when a remote server's connection ended under a call: it names the server. */
export function droppedMessage(server: string, transport: Transport): string {
  const reason = "dropReason" in transport && typeof transport.dropReason === "string" ? ` (${transport.dropReason})` : "";
  return `MCP server "${server}" dropped the connection${reason}; it is reconnected for the next call`;
}
