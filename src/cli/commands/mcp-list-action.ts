import type { Command } from "commander";
import { listMcpServers } from "../../app/commands/mcp-list.js";
import { createLogger, flushLogger } from "../../logging/create-logger.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { McpServerInventory } from "../../tools/mcp/server-inventory.js";
import type { CliDeps } from "../cli-deps.js";
import { mcpCommandConfig } from "../mcp-config-state.js";
import { writeOut } from "../write-out.js";

interface McpListOptions {
  json?: boolean;
  config?: string;
  mcpConfig?: string;
}

/** `local-ai mcp list`: exit 0 when every server connected, 1 when one did not (or the config is unusable). */
export async function runMcpListCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<McpListOptions>();
  const logger = createLogger({ level: "warn", env: deps.env });
  try {
    const config = await mcpCommandConfig(options, deps);
    const servers = await listMcpServers(config, { logger, env: deps.env });
    await writeOut(deps.stdout, options.json === true ? `${JSON.stringify({ servers }, null, 2)}\n` : renderMcpList(servers));
    deps.setExitCode(servers.every((server) => server.state === "connected") ? 0 : 1);
  } catch (error) {
    if (!(error instanceof RuntimeError)) throw error;
    deps.stderr.write(`local-ai mcp list: ${error.message}\n`);
    deps.setExitCode(1);
  } finally {
    await flushLogger(logger);
  }
}

/** NAME, TRANSPORT, STATE, TOOLS, PROMPTS, RESOURCES, then each problem on its own line. */
export function renderMcpList(servers: readonly McpServerInventory[]): string {
  if (servers.length === 0) return "no MCP servers configured (mcp.servers in config.yaml, or --mcp-config FILE)\n";
  const table = [["NAME", "TRANSPORT", "STATE", "TOOLS", "PROMPTS", "RESOURCES"]];
  for (const server of servers) table.push([server.name, server.transport, server.state, String(server.tools), String(server.prompts), String(server.resources)]);
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => (line[column] ?? "").length)));
  const rows = table.map((line) => line.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("   ").trimEnd());
  const reasons = servers.filter((server) => server.reason !== undefined).map((server) => `${server.name}: ${server.reason}`);
  return `${[...rows, ...(reasons.length > 0 ? ["", ...reasons] : [])].join("\n")}\n`;
}
