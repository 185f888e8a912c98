import type { Command } from "commander";
import { lazyRuntime } from "../../app/lazy-runtime.js";
import { reportConfigState } from "../../app/report-config.js";
import { routeConsole } from "../../app/route-console.js";
import { startServerProcess } from "../../app/server-process.js";
import { stdioLimitsOf } from "../../app/stdio-limits.js";
import { resolveLogLevel } from "../../logging/create-logger.js";
import { createV1Methods } from "../../protocol/methods/v1-methods.js";
import { jsonRpcDialect } from "../../protocol/jsonrpc/jsonrpc-dialect.js";
import { runStdioServer } from "../../protocol/stdio-server.js";
import { v1Dialect } from "../../protocol/v1/v1-dialect.js";
import { readPackageInfo } from "../../shared/version.js";
import type { CliDeps } from "../cli-deps.js";
import { openStdioConfig } from "../stdio-config.js";

export interface ServeStdioOptions {
  config?: string;
  mcpConfig?: string;
  protocol: string;
}

/** The `serve-stdio` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runServeStdioCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<ServeStdioOptions>();
  if (options.protocol === "acp") {
    // The Agent Client Protocol is a front door of its own (src/acp), with its own action.
    const { runServeStdioAcp } = await import("./serve-stdio-acp-action.js");
    await runServeStdioAcp(options, deps);
    return;
  }
  if (options.protocol !== "v1" && options.protocol !== "jsonrpc") {
    deps.stderr.write(`local-ai: unsupported --protocol "${options.protocol}" (supported: v1, jsonrpc, acp)\n`);
    deps.setExitCode(2);
    return;
  }
  const wire = options.protocol;
  const config = await openStdioConfig(options, deps);
  const serving = startServerProcess({ level: config.early?.status === "loaded" ? config.early.config.app.log_level : undefined, env: deps.env, signals: deps.signals });
  const { logger } = serving;
  // Every stdout byte is a protocol message, even when a library prints.
  const consoleLog = logger.child({ component: "console" });
  const restoreConsole = routeConsole((level, text) => consoleLog[level](text));
  const info = readPackageInfo();
  // Built on the first method that needs it: ping and initialize never load the engines or the MCP client.
  const runtime = lazyRuntime(config.state.then((configState) => ({ configState, logger, info, env: deps.env, configReported: true })));
  const limits = stdioLimitsOf(config.early);
  // Logged once the config is parsed (at once, or in the background while ping is answered).
  void config.state.then((configState) => {
    if (config.early === null && configState.status === "loaded") logger.level = resolveLogLevel(configState.config.app.log_level, deps.env);
    reportConfigState(configState, logger);
    logger.info({ version: info.version, protocol: wire, config: configState.path, config_status: configState.status }, "serve-stdio started");
  });
  const result = await runStdioServer({
    input: process.stdin,
    output: process.stdout,
    logger,
    limits,
    signal: serving.signal,
    // A batch is at most as many calls as may be in flight at once.
    dialect: wire === "jsonrpc" ? jsonRpcDialect(limits.maxInFlight) : v1Dialect,
    methods: (control) =>
      createV1Methods(
        {
          server: { name: "local-ai", version: info.version },
          maxLineBytes: limits.maxLineBytes,
          coalesceMs: limits.coalesceMs,
          runDoctor: async (signal) => (await runtime.get()).runDoctor(signal),
          sessionRunner: async () => (await runtime.get()).sessionRunner(),
          runPlan: async (params, signal) => (await runtime.get()).runPlan(params, signal),
          pull: async (call) => (await runtime.get()).pull(call),
          unload: async (model) => (await runtime.get()).unload(model),
        },
        control,
        wire,
      ),
  });
  await runtime.close();
  restoreConsole();
  logger.info({ reason: result.reason, flushed: result.flushed }, "serve-stdio stopped");
  await serving.finish();
  // stdin may still hold the loop open (a host that never closes it): exit explicitly.
  process.exit(result.exitCode);
}
