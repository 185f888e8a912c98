import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/**
 * `local-ai serve-http`: the OpenAI-compatible API. Unlike serve-stdio it needs a valid config
 * and starts eagerly; every startup failure is one clear line on stderr and exit code 1.
 */
export function registerServeHttpCommand(program: Command, deps: CliDeps): void {
  program
    .command("serve-http")
    .description("serve the OpenAI-compatible HTTP API (chat completions with SSE streaming, completions, embeddings, models)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .option("--host <host>", "bind address (default: http.host, 127.0.0.1)")
    .option("--port <port>", "port (default: http.port, 8080)")
    .option("--bearer-token <token>", "require Authorization: Bearer <token> on /v1/* (visible in the process list: prefer the file or $LOCAL_AI_TOKEN)")
    .option("--bearer-token-file <file>", "read the bearer token from a file (mode 600); also $LOCAL_AI_TOKEN, http.bearer_token_file, http.bearer_token")
    .option("--mcp-config <file>", "MCP servers from a YAML or JSON file (also the common {\"mcpServers\": {...}} shape)")
    .option("--exit-on-stdin-eof", "stop gracefully (as on SIGTERM) when stdin is closed: a host that spawns this with a pipe on stdin stops it by closing the pipe, or by dying")
    // The implementation (and everything it imports) loads only when this command runs.
    .action(async (_options: unknown, command: Command) => {
      const { runServeHttpCommand } = await import("./serve-http-action.js");
      await runServeHttpCommand(command, deps);
    });
}
