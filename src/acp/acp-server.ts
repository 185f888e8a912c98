import type { Readable, Writable } from "node:stream";
import type { Logger } from "pino";
import { flushOutput, settleInFlight } from "../stdio/shutdown-sequence.js";
import type { StdioLimits } from "../stdio/stdio-limits.js";
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

export interface AcpServerResult {
  exitCode: number;
  reason: string;
  flushed: boolean;
}

/**
 * `serve-stdio --protocol acp`: the Agent Client Protocol on stdin/stdout, for editors. Stops at
 * stdin EOF or on the abort signal with the shutdown sequence of every stdio server
 * (protocol/shutdown-sequence.ts): nothing new is read, requests in flight
 * get `shutdown_grace_ms` to answer (then running prompts are cancelled), each session's own MCP
 * servers stop, and the output drains (`flush_timeout_ms`).
 */
export async function runAcpServer(options: AcpServerOptions): Promise<AcpServerResult> {
  const { logger, limits } = options;
  const sink = new LineSink(options.output, logger);
  const gate = new RequestGate(limits.maxInFlight);
  const sessions = new AcpSessions();
  const logins = new AcpMcpLogins(logger);
  const state: AcpConnectionState = { deps: options.deps, sessions, clientCapabilities: {}, logger, logins };
  let stopping = false;
  let reason = "connection closed";

  /** Lets requests in flight answer; after the grace period running prompts are cancelled (and answer `cancelled`). */
  const settle = async (why: string): Promise<void> => {
    stopping = true;
    reason = why;
    logger.info({ reason: why, in_flight: gate.size }, "ACP server stopping");
    // Requests read just before the end are still being dispatched by the connection.
    await new Promise((resolve) => setImmediate(resolve));
    const work = { settled: () => gate.settled(), abortAll: (why: string) => sessions.cancelAll(why), describe: () => ({ in_flight: gate.size }) };
    await settleInFlight(work, limits.shutdownGraceMs, logger, "cancelling prompts still running at shutdown");
  };

  const stream = acpStdioStream({ input: options.input, sink, gate, maxLineBytes: limits.maxLineBytes, logger, beforeEnd: () => settle("stdin closed"), stopping: () => stopping });
  const connection = createAcpAgent(state).connect(stream);
  const onAbort = (): void => {
    if (stopping) return;
    void settle(typeof options.signal?.reason === "string" ? options.signal.reason : "signal").then(() => connection.close());
  };
  if (options.signal?.aborted === true) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });

  await connection.closed;
  options.signal?.removeEventListener("abort", onAbort);
  const closeReason: unknown = connection.signal.reason;
  if (!stopping) logger.warn({ err: closeReason }, "ACP connection closed");
  logins.abortAll();
  await sessions.closeAll();
  const flushed = await flushOutput(sink, limits.flushTimeoutMs, logger);
  return { exitCode: 0, reason, flushed };
}
