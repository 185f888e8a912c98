import type { Readable, Writable } from "node:stream";
import { jsonRpcDialect } from "../../protocol/jsonrpc/jsonrpc-dialect.js";
import { createV1Methods } from "../../protocol/methods/v1-methods.js";
import { runStdioServer } from "../../protocol/stdio-server.js";
import { v1Dialect } from "../../protocol/v1/v1-dialect.js";
import { serveStdioLines, type StdioServingOptions } from "./stdio-serving.js";

export interface ServeStdioOptions extends StdioServingOptions {
  /** The framing: seed 000 NDJSON or JSON-RPC 2.0 (ACP is serve-stdio-acp.ts). */
  protocol: "v1" | "jsonrpc";
  /** The process's stdin and stdout: every byte on `output` is a protocol message. */
  input: Readable;
  output: Writable;
}

/**
 * `local-ai serve-stdio` (v1 or JSON-RPC): serves the method table on stdin/stdout until stdin
 * ends, `shutdown`, or a signal; resolves with the exit code once everything is closed and
 * flushed. The runtime is built on the first method that needs it.
 */
export function serveStdio(options: ServeStdioOptions): Promise<number> {
  const wire = options.protocol;
  return serveStdioLines(options, wire, ({ serving, info, runtime, limits }) =>
    runStdioServer({
      input: options.input,
      output: options.output,
      logger: serving.logger,
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
            runDoctor: async (signal, log) => (await runtime.get()).runDoctor(signal, log),
            sessionRunner: async () => (await runtime.get()).sessionRunner(),
            runPlan: async (params, signal, log) => (await runtime.get()).runPlan(params, signal, log),
            pull: async (call) => (await runtime.get()).pull(call),
            unload: async (model) => (await runtime.get()).unload(model),
            ps: async () => (await runtime.get()).engines().ps(),
            metrics: () => runtime.metrics(),
            metricsRecorder: () => runtime.recorder(),
            tokenizer: async () => (await runtime.get()).tokenizer(),
          },
          control,
          wire,
        ),
    }),
  );
}
