/**
 * What local-ai keeps of one remote MCP server's OAuth login (docs/tools.md): the client
 * registration and the tokens exactly as the MCP SDK handed them over, plus when they were saved
 * (so an access token is refreshed before `expires_in` runs out). `url` is the server they were
 * issued for: a config that points the name at another URL does not reuse them.
 * Written by src/store (one file per server under data_dir, 0600), used by src/tools/mcp/auth.
 */
export interface McpAuthRecord {
  url: string;
  client?: Record<string, unknown>;
  tokens?: Record<string, unknown>;
  /** Epoch ms when `tokens` were saved. */
  tokens_saved_at?: number;
}

export interface McpAuthStore {
  read(server: string): Promise<McpAuthRecord | undefined>;
  write(server: string, record: McpAuthRecord): Promise<void>;
  /** True when there was something to remove. */
  remove(server: string): Promise<boolean>;
  /** The file of a server's record, for messages. */
  fileOf(server: string): string;
}
