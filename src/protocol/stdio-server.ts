import type { Readable, Writable } from "node:stream";
import type { Logger } from "pino";
import { settlesWithin } from "../shared/abort.js";
import { RuntimeError, toRuntimeError } from "../shared/runtime-error.js";
import { dispatch } from "./dispatcher.js";
import { parseEnvelope } from "./envelope.js";
import { errorFrame } from "./error-frame.js";
import { InFlightRequests } from "./in-flight.js";
import { readLines, type LineItem } from "./line-reader.js";
import type { EventMessage, OutboundMessage, Request, RequestId } from "./messages.js";
import type { MethodTable } from "./method.js";
import { OutboundWriter } from "./outbound-writer.js";

export interface StdioLimits {
  maxLineBytes: number;
  writerQueueSize: number;
  flushTimeoutMs: number;
  shutdownGraceMs: number;
  /** Lines are not read while this many requests are in flight (backpressure on stdin). */
  maxInFlight: number;
}

export interface StdioServerOptions {
  input: Readable;
  output: Writable;
  logger: Logger;
  limits: StdioLimits;
  /** Built by the caller with access to `control`, so `shutdown` and `cancel` can reach the server. */
  methods: (control: StdioControl) => MethodTable;
  /** Aborting it (SIGTERM, SIGINT) stops the server like `shutdown` does. */
  signal?: AbortSignal;
}

/** What methods may ask of the server that runs them. */
export interface StdioControl {
  requestShutdown(reason: string): void;
  inFlight: InFlightRequests;
}

export interface StdioServerResult {
  exitCode: number;
  reason: string;
  flushed: boolean;
}

/**
 * The v1 NDJSON server (seed 000): reads capped lines, answers each request concurrently, and
 * writes every outbound message through one bounded writer. Stops on stdin EOF, `shutdown` or the
 * abort signal: no new requests, in-flight work finishes (bounded) or is cancelled, the writer drains.
 */
export async function runStdioServer(options: StdioServerOptions): Promise<StdioServerResult> {
  const { logger, limits } = options;
  const writer = new OutboundWriter(options.output, { maxMessages: limits.writerQueueSize, logger });
  const inFlight = new InFlightRequests();
  let stopReason: string | null = null;
  let wakeStop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (wakeStop = resolve));
  const requestShutdown = (reason: string): void => {
    if (stopReason !== null) return;
    stopReason = reason;
    logger.info({ reason }, "stdio server stopping");
    wakeStop();
  };
  const methods = options.methods({ requestShutdown, inFlight });
  const onAbort = (): void => requestShutdown(typeof options.signal?.reason === "string" ? options.signal.reason : "signal");
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });

  const send = (message: OutboundMessage): Promise<void> => writer.push(encode(message, logger) ?? internalErrorLine(message.id));

  const execute = async (request: Request, controller: AbortController): Promise<void> => {
    const log = logger.child({ req_id: request.id, method: request.method });
    const emit = (event: string, fields: Record<string, unknown> = {}): void => {
      // Seed order: id, type, event, then the event's own fields (which never replace those three).
      const message: EventMessage = { id: request.id, type: "event", event };
      for (const [key, value] of Object.entries(fields)) if (!(key in message)) message[key] = value;
      const line = encode(message, logger);
      if (line !== null) writer.offer(line);
    };
    try {
      const result = await dispatch(methods, request.method, request.params, { id: request.id, signal: controller.signal, log, emit });
      await send({ id: request.id, type: "result", result: result ?? null });
    } catch (thrown) {
      const error = controller.signal.aborted && !(thrown instanceof RuntimeError) ? new RuntimeError("cancelled", "Request cancelled") : toRuntimeError(thrown);
      if (error.code === "internal_error") {
        log.error({ err: thrown }, "method failed unexpectedly");
        error.message = `Internal error in "${request.method}"; the details are in the log`;
      } else {
        log.debug({ code: error.code, message: error.message }, "method answered an error");
      }
      await send(errorFrame(request.id, error));
    }
  };

  const handleLine = async (item: LineItem): Promise<void> => {
    if (item.kind === "overflow") {
      logger.warn({ bytes: item.bytes, max: limits.maxLineBytes }, "request line over the limit discarded");
      await send({ id: null, type: "error", code: "invalid_request", message: `Request line of ${item.bytes} bytes exceeds the limit of ${limits.maxLineBytes} bytes; it was discarded` });
      return;
    }
    const envelope = parseEnvelope(item.text);
    if (envelope.kind === "invalid") {
      logger.debug({ code: envelope.code, id: envelope.id }, envelope.message);
      await send({ id: envelope.id, type: "error", code: envelope.code, message: envelope.message });
      return;
    }
    const { request } = envelope;
    if (inFlight.has(request.id)) {
      await send({ id: request.id, type: "error", code: "invalid_request", message: `A request with id ${JSON.stringify(request.id)} is already in flight; ids must be unique among in-flight requests` });
      return;
    }
    const controller = new AbortController();
    const done = execute(request, controller).finally(() => inFlight.delete(request.id));
    inFlight.add({ id: request.id, method: request.method, controller, done });
  };

  const readLoop = async (): Promise<void> => {
    try {
      for await (const item of readLines(options.input, limits.maxLineBytes)) {
        if (stopReason !== null) return;
        await handleLine(item);
        await inFlight.waitBelow(limits.maxInFlight);
      }
      requestShutdown("stdin closed");
    } catch (error) {
      logger.error({ err: error }, "reading stdin failed");
      requestShutdown("stdin error");
    }
  };
  void readLoop();

  await stopped;
  options.signal?.removeEventListener("abort", onAbort);
  const finished = await settlesWithin(inFlight.settled(), limits.shutdownGraceMs);
  if (!finished) {
    logger.warn({ pending: inFlight.list().map((entry) => entry.id) }, "cancelling requests still in flight at shutdown");
    inFlight.abortAll("shutting down");
    await settlesWithin(inFlight.settled(), 1000);
  }
  const flushed = await writer.close(limits.flushTimeoutMs);
  if (!flushed) logger.warn({ stats: writer.stats }, "output not fully flushed before the timeout");
  logger.debug({ stats: writer.stats }, "stdio writer closed");
  return { exitCode: 0, reason: stopReason ?? "stopped", flushed };
}

/** A message that cannot be serialised (a BigInt, a cycle) is logged, never a crash. */
function encode(message: OutboundMessage, logger: Logger): string | null {
  try {
    return `${JSON.stringify(message)}\n`;
  } catch (error) {
    logger.error({ err: error, id: message.id }, "could not serialise an outbound message");
    return null;
  }
}

/** What a result that could not be serialised becomes: the host still gets an answer for its id. */
function internalErrorLine(id: RequestId | null): string {
  return `${JSON.stringify({ id, type: "error", code: "internal_error", message: "Internal error: the response could not be serialised" })}\n`;
}
