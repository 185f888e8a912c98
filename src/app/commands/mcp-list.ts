import type { Logger } from "pino";
import type { Config } from "../../config/schema.js";
import { McpAuthFiles } from "../../store/mcp-auth-files.js";
import { McpAuth } from "../../tools/mcp/oauth/mcp-auth.js";
import { inventoryServers, type McpServerInventory } from "../../tools/mcp/server-inventory.js";

/** Bound on reaching one server (a first `npx -y` may download a stdio server). */
const START_TIMEOUT_MS = 30_000;

/** `local-ai mcp list`: every configured server, connected once with the logins in data_dir (never a new one). */
export function listMcpServers(config: Config, deps: { logger: Logger; env: Readonly<Record<string, string | undefined>>; startTimeoutMs?: number }): Promise<McpServerInventory[]> {
  const auth = new McpAuth({ store: new McpAuthFiles(config.app.data_dir), logger: deps.logger });
  return inventoryServers(config.mcp.servers, { logger: deps.logger, env: deps.env, auth, startTimeoutMs: deps.startTimeoutMs ?? START_TIMEOUT_MS });
}
