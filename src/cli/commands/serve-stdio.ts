import type { Command } from "commander";
import { createRuntime } from "../../app/runtime.js";
import { startServerProcess } from "../../app/server-process.js";
import { applyMcpConfig } from "../../config/apply-mcp-config.js";
import { loadConfig } from "../../config/load-config.js";
import { createV1Methods } from "../../protocol/methods/v1-methods.js";
import { jsonRpcDialect } from "../../protocol/jsonrpc/jsonrpc-dialect.js";
import { runStdioServer } from "../../protocol/stdio-server.js";
import { v1Dialect } from "../../protocol/v1/v1-dialect.js";
import { readPackageInfo } from "../../shared/version.js";
import type { CliDeps } from "../cli-deps.js";

interface ServeStdioOptions {
  config?: string;
  mcpConfig?: string;
  protocol: string;
}

/** `local-ai serve-stdio`: stdout carries protocol messages only; every log line goes to stderr. */
export function registerServeStdioCommand(program: Command, deps: CliDeps): void {
  program
    .command("serve-stdio")
    .description("Serve the NDJSON protocol on stdin/stdout (for host apps such as Electron)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .option("--protocol <name>", "wire protocol: v1 (seed 000 NDJSON) or jsonrpc (JSON-RPC 2.0)", "v1")
    .option("--mcp-config <file>", "MCP servers from a YAML or JSON file (also the common {\"mcpServers\": {...}} shape)")
    .action(async (_options: ServeStdioOptions, command: Command) => {
      const options = command.optsWithGlobals<ServeStdioOptions>();
      if (options.protocol !== "v1" && options.protocol !== "jsonrpc") {
        deps.stderr.write(`local-ai: unsupported --protocol "${options.protocol}" (supported: v1, jsonrpc)\n`);
        deps.setExitCode(2);
        return;
      }
      const wire = options.protocol;
      const configState = await applyMcpConfig(await loadConfig({ flag: options.config, env: deps.env, cwd: deps.cwd }), options.mcpConfig, deps.env, deps.cwd);
      const serving = startServerProcess({ level: configState.status === "loaded" ? configState.config.app.log_level : undefined, env: deps.env });
      const { logger } = serving;
      const runtime = createRuntime({ configState, logger, info: readPackageInfo(), env: deps.env });
      const limits = runtime.stdioLimits();
      logger.info({ version: runtime.info.version, protocol: wire, config: configState.path, config_status: configState.status }, "serve-stdio started");
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
              server: { name: "local-ai", version: runtime.info.version },
              maxLineBytes: limits.maxLineBytes,
              coalesceMs: limits.coalesceMs,
              runDoctor: (signal) => runtime.runDoctor(signal),
              sessionRunner: () => runtime.sessionRunner(),
              runPlan: (params, signal) => runtime.runPlan(params, signal),
            },
            control,
            wire,
          ),
      });
      await runtime.close();
      logger.info({ reason: result.reason, flushed: result.flushed }, "serve-stdio stopped");
      await serving.finish();
      // stdin may still hold the loop open (a host that never closes it): exit explicitly.
      process.exit(result.exitCode);
    });
}
