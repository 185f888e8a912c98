import type { Command } from "commander";
import { serveSocket } from "../../app/serve/serve-socket.js";
import type { CliDeps } from "../cli-deps.js";
import { loadServingConfig } from "../serving-config.js";

export interface ServeSocketOptions {
  config?: string;
  mcpConfig?: string;
  exitOnStdinEof?: boolean;
  socket?: string;
  session?: string;
  name?: string;
}

/** The `serve-socket` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runServeSocketCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<ServeSocketOptions>();
  const fail = (message: string): void => {
    deps.stderr.write(`local-ai serve-socket: ${message}\n`);
    deps.setExitCode(1);
  };
  const loaded = await loadServingConfig(options, deps);
  if (!loaded.ok) return fail(loaded.message);
  const outcome = await serveSocket({
    config: loaded.config,
    configState: loaded.configState,
    socket: options.socket,
    session: options.session,
    name: options.name,
    cwd: deps.cwd,
    env: deps.env,
    signals: deps.signals,
    lifeline: options.exitOnStdinEof === true ? deps.io.stdin : undefined,
  });
  if (!outcome.ok) return fail(outcome.message);
  deps.io.exit(outcome.exitCode);
}
