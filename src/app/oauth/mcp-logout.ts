import type { Config } from "../../config/schema.js";
import { McpAuthFiles } from "../../store/mcp-auth-files.js";

/** `local-ai mcp logout <server>`: deletes its stored tokens and client registration. Any name works (a server since removed from the config too). */
export async function mcpLogout(config: Config, server: string): Promise<{ removed: boolean; file: string }> {
  const store = new McpAuthFiles(config.app.data_dir);
  return { removed: await store.remove(server), file: store.fileOf(server) };
}
