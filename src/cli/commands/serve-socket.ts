import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/**
 * `local-ai serve-socket`: one pod (one session) on a Unix socket, Pod protocol (seed 004).
 * Needs a valid config and starts eagerly; startup failures are one line on stderr and exit 1.
 */
export function registerServeSocketCommand(program: Command, deps: CliDeps): void {
  program
    .command("serve-socket")
    .description("serve one session as a pod on a Unix socket (Pod protocol; `local-ai pod` is its client)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .option("--socket <path>", "socket path (default: <data_dir>/pod.sock)")
    .option("--session <id>", "session to serve (default: the one this pod served last, else a new one)")
    .option("--name <name>", "pod name (default: the first agent's name)")
    .option("--mcp-config <file>", "MCP servers from a YAML or JSON file (also the common {\"mcpServers\": {...}} shape)")
    .option("--exit-on-stdin-eof", "stop gracefully (as on SIGTERM) when stdin is closed: a host that spawns this with a pipe on stdin stops it by closing the pipe, or by dying")
    // The implementation (and everything it imports) loads only when this command runs.
    .action(async (_options: unknown, command: Command) => {
      const { runServeSocketCommand } = await import("./serve-socket-action.js");
      await runServeSocketCommand(command, deps);
    });
}
