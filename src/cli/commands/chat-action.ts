import type { Command } from "commander";
import { readPackageInfo } from "../../shared/version.js";
import type { CliDeps } from "../cli-deps.js";
import { loadServingConfig } from "../serving-config.js";

export interface ChatOptions {
  config?: string;
  mcpConfig?: string;
  agent?: string;
  session?: string;
  thinking: boolean;
  usage?: boolean;
}

/** The `chat` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runChatCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<ChatOptions>();
  const loaded = await loadServingConfig(options, deps);
  if (!loaded.ok) {
    deps.stderr.write(`local-ai chat: ${loaded.message}\n`);
    deps.setExitCode(1);
    return;
  }
  const { runTerminalChat } = await import("../../app/commands/terminal-chat.js");
  const code = await runTerminalChat(
    { configState: loaded.configState, info: readPackageInfo(), agent: options.agent, session: options.session, showThinking: options.thinking, showUsage: options.usage === true },
    { stdin: deps.io.stdin, stdout: deps.io.stdout, stderr: deps.io.stderr, env: deps.env },
  );
  // A turn abandoned by a forced exit (second Ctrl-C, SIGTERM) must not keep the process up.
  deps.io.exit(code);
}
