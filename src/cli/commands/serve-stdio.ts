import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/** `local-ai serve-stdio`: stdout carries protocol messages only; every log line goes to stderr. */
export function registerServeStdioCommand(program: Command, deps: CliDeps): void {
  program
    .command("serve-stdio")
    .description("serve the stdio protocol on stdin/stdout: NDJSON for host apps such as Electron, JSON-RPC 2.0 (--protocol jsonrpc) or ACP for editors (serve-stdio --protocol acp)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .option("--protocol <name>", "wire protocol: v1 (seed 000 NDJSON), jsonrpc (JSON-RPC 2.0) or acp (Agent Client Protocol, for editors)", "v1")
    .option("--mcp-config <file>", "MCP servers from a YAML or JSON file (also the common {\"mcpServers\": {...}} shape)")
    // The implementation (and everything it imports) loads only when this command runs.
    .action(async (_options: unknown, command: Command) => {
      const { runServeStdioCommand } = await import("./serve-stdio-action.js");
      await runServeStdioCommand(command, deps);
    });
}
