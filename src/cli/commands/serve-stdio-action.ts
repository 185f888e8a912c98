import type { Command } from "commander";
import { protocolOutput } from "../../shared/process/protocol-output.js";
import type { CliDeps } from "../cli-deps.js";

export interface ServeStdioOptions {
  config?: string;
  mcpConfig?: string;
  protocol: string;
}

/** The `serve-stdio` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runServeStdioCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<ServeStdioOptions>();
  const serving = { config: options.config, mcpConfig: options.mcpConfig, cwd: deps.cwd, env: deps.env, signals: deps.signals, input: deps.io.stdin, output: protocolOutput(deps.io.stdout, process.platform) };
  let exitCode: number;
  if (options.protocol === "acp") {
    // The Agent Client Protocol is a front door of its own (src/acp), imported only for it.
    const { serveStdioAcp } = await import("../../app/serve/serve-stdio-acp.js");
    exitCode = await serveStdioAcp(serving);
  } else if (options.protocol === "v1" || options.protocol === "jsonrpc") {
    const { serveStdio } = await import("../../app/serve/serve-stdio.js");
    exitCode = await serveStdio({ ...serving, protocol: options.protocol });
  } else {
    deps.stderr.write(`local-ai: unsupported --protocol "${options.protocol}" (supported: v1, jsonrpc, acp)\n`);
    deps.setExitCode(2);
    return;
  }
  // stdin may still hold the loop open (a host or an editor that never closes it): exit explicitly.
  deps.io.exit(exitCode);
}
