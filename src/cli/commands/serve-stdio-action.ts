import type { Command } from "commander";
import { createV1Methods } from "../../protocol/methods/v1-methods.js";
import { jsonRpcDialect } from "../../protocol/jsonrpc/jsonrpc-dialect.js";
import { runStdioServer } from "../../protocol/stdio-server.js";
import { v1Dialect } from "../../protocol/v1/v1-dialect.js";
import type { CliDeps } from "../cli-deps.js";
import { startStdioServing } from "../stdio-serving.js";

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
  const { serving, info, runtime, limits, stop } = await startStdioServing(options, deps, wire);
  const { logger } = serving;
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
  await stop(result);
  // stdin may still hold the loop open (a host that never closes it): exit explicitly.
  process.exit(result.exitCode);
}
