import type { Command } from "commander";
import { mcpLogin } from "../../app/oauth/mcp-login.js";
import { openBrowser } from "../../app/oauth/open-browser.js";
import { createLogger, flushLogger } from "../../logging/create-logger.js";
import type { CliDeps } from "../cli-deps.js";
import { mcpCommandConfig } from "../mcp-config-state.js";
import { writeOut } from "../write-out.js";

interface McpLoginOptions {
  port?: string;
  timeout: string;
  browser: boolean;
  config?: string;
  mcpConfig?: string;
}

/**
 * `local-ai mcp login <server>`: prints the authorization URL (stdout, one line of its own),
 * opens it in a browser only when stdout is a terminal and --no-browser is not given, waits
 * for the redirect, stores the tokens. Exit 0 when logged in, 1 otherwise, 2 for bad options.
 */
export async function runMcpLoginCommand(server: string, command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<McpLoginOptions>();
  const port = options.port === undefined ? undefined : Number(options.port);
  const timeoutS = Number(options.timeout);
  if ((port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) || !(timeoutS > 0)) {
    deps.stderr.write("local-ai mcp login: --port must be a port number and --timeout a number of seconds\n");
    deps.setExitCode(2);
    return;
  }
  const logger = createLogger({ level: "warn", env: deps.env });
  try {
    const config = await mcpCommandConfig(options, deps);
    const { file } = await mcpLogin({
      config,
      server,
      logger,
      timeoutMs: timeoutS * 1000,
      ...(port === undefined ? {} : { port }),
      showUrl: async (url) => {
        await writeOut(deps.stdout, `To log in to ${server}, open this URL in a browser:\n${url.href}\nWaiting for the redirect...\n`);
        if (options.browser && deps.stdoutIsTTY) openBrowser(url.href);
      },
    });
    await writeOut(deps.stdout, `Logged in to ${server}; tokens saved in ${file}\n`);
    deps.setExitCode(0);
  } catch (error) {
    deps.stderr.write(`local-ai mcp login: ${error instanceof Error ? error.message : String(error)}\n`);
    deps.setExitCode(1);
  } finally {
    await flushLogger(logger);
  }
}
