import type { Command } from "commander";
import { mcpLogout } from "../../app/oauth/mcp-logout.js";
import { RuntimeError } from "../../shared/runtime-error.js";
import type { CliDeps } from "../cli-deps.js";
import { mcpCommandConfig } from "../mcp-config-state.js";
import { writeOut } from "../write-out.js";

/** `local-ai mcp logout <server>`: exit 0 whether or not a login was stored (the end state is the same). */
export async function runMcpLogoutCommand(server: string, command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<{ config?: string; mcpConfig?: string }>();
  try {
    const config = await mcpCommandConfig(options, deps);
    const { removed, file } = await mcpLogout(config, server);
    await writeOut(deps.stdout, removed ? `Logged out of ${server}: removed ${file}\n` : `No stored login for ${server}\n`);
    deps.setExitCode(0);
  } catch (error) {
    if (!(error instanceof RuntimeError)) throw error;
    deps.stderr.write(`local-ai mcp logout: ${error.message}\n`);
    deps.setExitCode(1);
  }
}
