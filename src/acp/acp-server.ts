import type { Readable, Writable } from "node:stream";
import type { Logger } from "pino";
import { runLineServer, type LineServerResult } from "../serving/line-server.js";
import type { StdioLimits } from "../serving/stdio-limits.js";
import { createAcpAgent } from "./acp-agent-app.js";
import type { AcpConnectionState } from "./acp-connection-state.js";
import type { AcpDeps } from "./acp-deps.js";
import { AcpSessions } from "./acp-sessions.js";
import { acpStdioStream } from "./acp-stdio-stream.js";
import { AcpMcpLogins } from "./mcp-login-offer.js";
import { LineSink } from "./line-sink.js";
import { RequestGate } from "./request-gate.js";

export interface AcpServerOptions {
  input: Readable;
  output: Writable;
  logger: Logger;
  /** The stdio limits; the ACP writer keeps every message, so it has no queue size. */
  limits: Omit<StdioLimits, "writerQueueSize">;
  deps: AcpDeps;
  /** Aborting it (SIGTERM, SIGINT) stops the server like stdin EOF does. */
  signal?: AbortSignal;
}

export type AcpServerResult = LineServerResult;

/**
 * `serve-stdio --protocol acp`: the Agent Client Protocol on stdin/stdout, for editors, as a door
 * on the line server (serving/line-server.ts, which reads, stops and flushes as for every stdio
 * server). Stops at stdin EOF or on the abort signal: nothing new is read, requests in flight
 * get `shutdown_grace_ms` to answer (then running prompts are cancelled), each session's own MCP
 * servers stop, and the output drains (`flush_timeout_ms`).
 */
export function runAcpServer(options: AcpServerOptions): Promise<AcpServerResult> {
  const { logger, limits } = options;
  return runLineServer({ input: options.input, logger, limits, signal: options.signal }, (control) => {
    const sink = new LineSink(options.output, logger);
    const gate = new RequestGate(limits.maxInFlight);
    const sessions = new AcpSessions();
    const logins = new AcpMcpLogins(logger);
    const state: AcpConnectionState = { deps: options.deps, sessions, clientCapabilities: {}, logger, logins };
    const stream = acpStdioStream({ sink, gate, maxLineBytes: limits.maxLineBytes, logger });
    const connection = createAcpAgent(state).connect(stream.stream);
    void connection.closed.then(() => {
      if (control.stopping()) return;
      const closeReason: unknown = connection.signal.reason;
      logger.warn({ err: closeReason }, "ACP connection closed");
      control.requestStop("connection closed");
    });
    return {
      name: "ACP server",
      output: sink,
      admit: stream.admit,
      handle: stream.handle,
      // Once the connection is closed nothing more can be answered.
      work: { settled: () => Promise.race([gate.settled(), connection.closed]), abortAll: (why) => sessions.cancelAll(why), describe: () => ({ in_flight: gate.size }) },
      cancelMessage: "cancelling prompts still running at shutdown",
      // Requests read just before the end are still being dispatched by the connection.
      beforeSettle: () => new Promise((resolve) => setImmediate(resolve)),
      close: async () => {
        stream.end();
        await connection.closed;
        logins.abortAll();
        await sessions.closeAll();
      },
    };
  });
}
