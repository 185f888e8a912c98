import type { Command } from "commander";
import { serveHttp } from "../../app/serve/serve-http.js";
import type { CliDeps } from "../cli-deps.js";
import { loadServingConfig } from "../serving-config.js";

export interface ServeHttpOptions {
  config?: string;
  mcpConfig?: string;
  exitOnStdinEof?: boolean;
  host?: string;
  port?: string;
  bearerToken?: string;
  bearerTokenFile?: string;
}

/** The `serve-http` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runServeHttpCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<ServeHttpOptions>();
  const fail = (message: string): void => {
    deps.stderr.write(`local-ai serve-http: ${message}\n`);
    deps.setExitCode(1);
  };
  const loaded = await loadServingConfig(options, deps);
  if (!loaded.ok) return fail(loaded.message);
  const port = options.port === undefined ? undefined : Number(options.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) return fail(`--port must be an integer 0-65535 (got ${JSON.stringify(options.port)})`);
  const outcome = await serveHttp({
    config: loaded.config,
    configState: loaded.configState,
    host: options.host,
    port,
    bearerToken: options.bearerToken,
    bearerTokenFile: options.bearerTokenFile,
    env: deps.env,
    signals: deps.signals,
    lifeline: options.exitOnStdinEof === true ? deps.io.stdin : undefined,
  });
  if (!outcome.ok) return fail(outcome.message);
  deps.io.exit(outcome.exitCode);
}
