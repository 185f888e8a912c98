import type { Readable } from "node:stream";
import type { Logger } from "pino";
import type { LineItem } from "../shared/line-splitter.js";
import type { LineOutput } from "./line-output.js";
import { flushOutput, settleInFlight, type InFlightWork } from "./shutdown-sequence.js";
import type { StdioLimits } from "./stdio-limits.js";
import { runStdioReadLoop } from "./stdio-read-loop.js";

/** What a front door may ask of the line server it is plugged into. */
export interface LineServerControl {
  /** Stops the server (the first reason wins): nothing new is read, then the shutdown sequence runs. */
  requestStop: (reason: string) => void;
  /** True once a stop was requested. */
  stopping: () => boolean;
}

/**
 * A front door on the line server (v1 and JSON-RPC: protocol/stdio-server.ts; ACP:
 * acp/acp-server.ts): what it does with each line, where its answers go, and what its shutdown
 * waits for. Everything else (reading, the stop, the grace period, the flush) is the server's.
 */
export interface LineDoor {
  /** Names the server in its log lines ("stdio server", "ACP server"). */
  name: string;
  /** Where every outbound line goes; flushed and closed as the last step. */
  output: LineOutput;
  /** One line read from the input; the next is not read until it resolves (backpressure on the input). */
  handle: (item: LineItem) => Promise<void>;
  /** Awaited before each line is read (ACP: until its connection takes a message and fewer than the limit are in flight). */
  admit?: () => Promise<void>;
  /** The work in flight: it gets the grace period, then is aborted. */
  work: InFlightWork;
  /** The warning logged when work outlives the grace period. */
  cancelMessage: string;
  /** After the stop and before the grace period (ACP: lets lines read just before the end reach its handlers). */
  beforeSettle?: () => Promise<void>;
  /** After the work settled and before the flush: the door's own closing (pending batch answers, sessions). */
  close?: () => Promise<void>;
  /** Fields about the output for the flush's log lines. */
  outputStats?: () => Record<string, unknown>;
}

export interface LineServerOptions {
  input: Readable;
  logger: Logger;
  limits: Pick<StdioLimits, "maxLineBytes" | "flushTimeoutMs" | "shutdownGraceMs">;
  /** Aborting it (SIGTERM, SIGINT) stops the server as stdin EOF does. */
  signal?: AbortSignal | undefined;
}

export interface LineServerResult {
  exitCode: number;
  reason: string;
  flushed: boolean;
}

/**
 * The line server every stdio front door plugs into: capped lines from `input`, one at a time, to
 * the door; a stop latch that stdin EOF or a read error, the abort signal, or the door itself
 * (`shutdown`, a connection that closed) sets once; then the shutdown sequence: nothing new is
 * read, work in flight gets `shutdownGraceMs` and is then aborted (the settle step), the door
 * closes, and its output drains within `flushTimeoutMs`. Resolves once all of that is done.
 */
export async function runLineServer(options: LineServerOptions, plug: (control: LineServerControl) => LineDoor): Promise<LineServerResult> {
  const { logger, limits, signal } = options;
  let reason: string | null = null;
  let wakeStop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (wakeStop = resolve));
  const control: LineServerControl = {
    requestStop: (why) => {
      if (reason !== null) return;
      reason = why;
      wakeStop();
    },
    stopping: () => reason !== null,
  };
  const door = plug(control);
  const onAbort = (): void => control.requestStop(typeof signal?.reason === "string" ? signal.reason : "signal");
  if (signal?.aborted === true) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });

  const { handle, admit } = door;
  void runStdioReadLoop({ input: options.input, maxLineBytes: limits.maxLineBytes, logger, stopping: control.stopping, handle, ...(admit ? { admit } : {}) }).then((ended) => {
    if (ended !== null) control.requestStop(ended);
  });

  await stopped;
  signal?.removeEventListener("abort", onAbort);
  logger.info({ reason, ...door.work.describe() }, `${door.name} stopping`);
  await door.beforeSettle?.();
  await settleInFlight(door.work, limits.shutdownGraceMs, logger, door.cancelMessage);
  await door.close?.();
  const stats = door.outputStats ?? (() => ({}));
  const flushed = await flushOutput(door.output, limits.flushTimeoutMs, logger, stats);
  logger.debug(stats(), "stdio writer closed");
  return { exitCode: 0, reason: reason ?? "stopped", flushed };
}
