import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

const CONFIG_HELP = "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)";
const MCP_CONFIG_HELP = "more MCP servers from this file (ours, or the mcpServers JSON of Claude Desktop, Cursor, LM Studio)";

/**
 * `local-ai mcp list [--json]`, `local-ai mcp login <server>`, `local-ai mcp logout <server>`:
 * the configured MCP servers and the OAuth logins of remote ones (docs/tools.md).
 */
export function registerMcpCommand(program: Command, deps: CliDeps): void {
  const mcp = program.command("mcp").description("the configured MCP servers: list them, log in to or out of remote ones");
  mcp
    .command("list")
    .description("every configured MCP server: transport, state (connected, needs_login, failed), tool/prompt/resource counts")
    .option("--json", "print {servers: [...]} as JSON (for scripts)")
    .option("--config <file>", CONFIG_HELP)
    .option("--mcp-config <file>", MCP_CONFIG_HELP)
    .action(async (_options: unknown, command: Command) => {
      const { runMcpListCommand } = await import("./mcp-list-action.js");
      await runMcpListCommand(command, deps);
    });
  mcp
    .command("login")
    .description("log in to a remote MCP server with OAuth: prints the authorization URL and waits for the redirect on 127.0.0.1")
    .argument("<server>", "its name under mcp.servers")
    .option("--port <port>", "the loopback port to wait on (default: the one it registered with, else any free one)")
    .option("--timeout <seconds>", "how long to wait for the redirect", "300")
    .option("--no-browser", "only print the URL (a browser is opened only when stdout is a terminal)")
    .option("--config <file>", CONFIG_HELP)
    .option("--mcp-config <file>", MCP_CONFIG_HELP)
    .action(async (server: string, _options: unknown, command: Command) => {
      const { runMcpLoginCommand } = await import("./mcp-login-action.js");
      await runMcpLoginCommand(server, command, deps);
    });
  mcp
    .command("logout")
    .description("delete a remote MCP server's stored OAuth tokens and client registration")
    .argument("<server>", "its name under mcp.servers")
    .option("--config <file>", CONFIG_HELP)
    .option("--mcp-config <file>", MCP_CONFIG_HELP)
    .action(async (server: string, _options: unknown, command: Command) => {
      const { runMcpLogoutCommand } = await import("./mcp-logout-action.js");
      await runMcpLogoutCommand(server, command, deps);
    });
}
