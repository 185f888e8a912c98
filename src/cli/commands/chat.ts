import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/**
 * `local-ai chat`: an interactive chat in the terminal on the same agent core as the servers;
 * with piped stdin, one turn per line and the answers on stdout (docs/chat.md).
 */
export function registerChatCommand(program: Command, deps: CliDeps): void {
  program
    .command("chat")
    .description("chat with an agent in the terminal (streamed answers, tool calls, approvals asked); piped stdin: one turn per line")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .option("--agent <name>", "agent to chat with (default: the first under agents)")
    .option("--session <id>", "continue this session (default: a new one; its id is shown at start)")
    .option("--no-thinking", "hide the model's thinking (shown dimmed by default)")
    .option("--usage", "print token usage after each answer")
    .option("--mcp-config <file>", "MCP servers from a YAML or JSON file (also the common {\"mcpServers\": {...}} shape)")
    // The implementation (and everything it imports) loads only when this command runs.
    .action(async (_options: unknown, command: Command) => {
      const { runChatCommand } = await import("./chat-action.js");
      await runChatCommand(command, deps);
    });
}
