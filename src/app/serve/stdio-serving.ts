import type { ConfigState } from "../../config/read-config-file.js";
import { resolveLogLevel } from "../../logging/create-logger.js";
import type { LineServerResult } from "../../serving/line-server.js";
import { readPackageInfo, type PackageInfo } from "../../shared/version.js";
import { lazyRuntime, type LazyRuntime } from "../runtime/lazy-runtime.js";
import { reportConfigState } from "../runtime/report-config.js";
import { routeConsole } from "../process/route-console.js";
import { startServerProcess, type ServerProcess } from "../process/server-process.js";
import type { SignalLatch } from "../process/signal-latch.js";
import { stdioLimitsOf } from "../runtime/stdio-limits.js";
import { openStdioConfig } from "./stdio-config.js";

export interface StdioServingOptions {
  /** --config and --mcp-config as given. */
  config?: string | undefined;
  mcpConfig?: string | undefined;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Signals held since start-up (main.ts): taken over by the server's shutdown handling. */
  signals?: SignalLatch | undefined;
}

export interface StdioServing {
  serving: ServerProcess;
  info: PackageInfo;
  runtime: LazyRuntime;
  limits: ReturnType<typeof stdioLimitsOf>;
  configState: Promise<ConfigState>;
}

/**
 * Every serve-stdio protocol (v1, JSON-RPC, ACP): sets up what they share (below), runs the
 * protocol's line server on it until it stops, then closes the runtime, puts console back, logs
 * the stop and flushes the log. Resolves with the exit code.
 */
export async function serveStdioLines(options: StdioServingOptions, protocol: string, run: (serving: StdioServing) => Promise<LineServerResult>): Promise<number> {
  const { stop, ...serving } = await startStdioServing(options, protocol);
  const result = await run(serving);
  await stop(result);
  return result.exitCode;
}

/**
 * What every serve-stdio protocol sets up the same way: the config (parsed
 * in the background while the first lines are answered), the logger on stderr with signals held
 * since start-up taken over, console output routed to the log (every stdout byte is a protocol
 * message, even when a library prints), and a runtime built on the first method that needs it.
 */
async function startStdioServing(options: StdioServingOptions, protocol: string): Promise<StdioServing & { stop: (result: LineServerResult) => Promise<void> }> {
  const config = await openStdioConfig(options, options);
  const serving = startServerProcess({ level: config.early?.status === "loaded" ? config.early.config.app.log_level : undefined, env: options.env, signals: options.signals });
  const { logger } = serving;
  const consoleLog = logger.child({ component: "console" });
  const restoreConsole = routeConsole((level, text) => consoleLog[level](text));
  const info = readPackageInfo();
  const runtime = lazyRuntime(config.state.then((configState) => ({ configState, logger, info, env: options.env, configReported: true })), { metrics: protocol !== "acp" });
  // Logged once the config is parsed (at once, or in the background while ping is answered).
  void config.state.then((configState) => {
    if (config.early === null && configState.status === "loaded") logger.level = resolveLogLevel(configState.config.app.log_level, options.env);
    reportConfigState(configState, logger);
    logger.info({ version: info.version, protocol, config: configState.path, config_status: configState.status }, "serve-stdio started");
  });
  return {
    serving,
    info,
    runtime,
    limits: stdioLimitsOf(config.early),
    configState: config.state,
    stop: async (result) => {
      await runtime.close();
      restoreConsole();
      logger.info({ reason: result.reason, flushed: result.flushed }, "serve-stdio stopped");
      await serving.finish();
    },
  };
}
