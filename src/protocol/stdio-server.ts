import type { Readable, Writable } from "node:stream";
import type { Logger } from "pino";
import { settlesWithin } from "../shared/abort.js";
import { RuntimeError, toRuntimeError } from "../shared/runtime-error.js";
import type { InboundCall, StdioDialect } from "./dialect.js";
import { createDispatcher } from "./dispatcher.js";
import { InFlightRequests } from "./in-flight.js";
import { readLines, type LineItem } from "../shared/line-splitter.js";
import type { RequestId } from "./messages.js";
import type { MethodTable } from "./method.js";
import { OutboundWriter } from "./outbound-writer.js";
import { v1Dialect } from "./v1/v1-dialect.js";

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
  /** The wire format: seed 000 v1 (the default) or seed 003 JSON-RPC 2.0. */
  dialect?: StdioDialect;
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
 * The stdio NDJSON server for every stdio dialect (v1, JSON-RPC): reads capped lines, answers each
 * request concurrently, and writes every outbound message through one bounded writer (events are
 * droppable, answers never). Stops on stdin EOF, `shutdown` or the abort signal: no new requests,
 * in-flight work finishes (bounded) or is cancelled, the writer drains.
 */
export async function runStdioServer(options: StdioServerOptions): Promise<StdioServerResult> {
  const { logger, limits } = options;
  const dialect = options.dialect ?? v1Dialect;
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
  const dispatch = createDispatcher(methods);
  const onAbort = (): void => requestShutdown(typeof options.signal?.reason === "string" ? options.signal.reason : "signal");
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });

  const outputBusy = (): boolean => writer.busy;
  const send = (frame: object, id: RequestId | null): Promise<void> => writer.push(encode(frame, id, logger) ?? internalErrorLine(dialect, id));

  /** Runs one call; resolves with its answer frame, or null for a notification. Never rejects. */
  const execute = async (call: InboundCall, controller: AbortController): Promise<object | null> => {
    const log = logger.child({ req_id: call.id, method: call.method });
    // A notification has no id to correlate events with: they are not sent.
    const emit = call.notification
      ? (): void => undefined
      : (event: string, fields: Record<string, unknown> = {}): void => {
          const line = encode(dialect.eventFrame(call.id, event, fields), call.id, logger);
          if (line !== null) writer.offer(line);
        };
    try {
      const params = (call.params ?? {}) as Record<string, unknown>;
      const result = await dispatch(call.method, params, { id: call.id, signal: controller.signal, log, emit, outputBusy });
      return call.notification ? null : dialect.resultFrame(call.id, result);
    } catch (thrown) {
      const error = controller.signal.aborted && !(thrown instanceof RuntimeError) ? new RuntimeError("cancelled", "Request cancelled") : toRuntimeError(thrown);
      if (error.code === "internal_error") {
        log.error({ err: thrown }, "method failed unexpectedly");
        error.message = `Internal error in "${call.method}"; the details are in the log`;
      } else {
        log.debug({ code: error.code, message: error.message, notification: call.notification }, "method answered an error");
      }
      return call.notification ? null : dialect.errorFrame(call.id, error, thrown);
    }
  };

  /**
   * Registers and starts a call; resolves with its answer (null: none to send). With `deliver` the
   * answer is queued on the writer before the call leaves the in-flight table, so a reader that
   * stops reading stops stdin being read too (backpressure), instead of answers piling up.
   */
  const start = (call: InboundCall, deliver: boolean): Promise<object | null> => {
    if (!call.notification && inFlight.has(call.id)) {
      const refusal = dialect.invalidRequestFrame(call.id, `a request with id ${JSON.stringify(call.id)} is already in flight; ids must be unique among in-flight requests`);
      return deliver ? send(refusal, call.id).then(() => null) : Promise.resolve(refusal);
    }
    const controller = new AbortController();
    let key = "";
    const answer = execute(call, controller)
      .then(async (frame) => {
        if (!deliver || frame === null) return frame;
        await send(frame, call.id);
        return null;
      })
      .finally(() => inFlight.delete(key));
    key = inFlight.add({ id: call.id, method: call.method, controller, done: answer.then(() => undefined) }, call.notification);
    return answer;
  };

  /**
   * stdin keeps being read at the in-flight limit, so cancel, shutdown and ping always get through;
   * other calls are refused with `busy` (null: a notification, dropped; undefined: not refused).
   */
  const refusal = (call: InboundCall): object | null | undefined => {
    if (inFlight.size < limits.maxInFlight || methods.get(call.method)?.control === true) return undefined;
    if (call.notification) {
      logger.warn({ method: call.method, limit: limits.maxInFlight }, "notification dropped: too many requests in flight");
      return null;
    }
    return dialect.errorFrame(call.id, busyError(limits.maxInFlight), undefined);
  };

  /** Batch answers are written after their calls settle; shutdown waits for those writes too. */
  const batchWrites = new Set<Promise<void>>();

  const handleLine = async (item: LineItem): Promise<void> => {
    if (item.kind === "overflow") {
      logger.warn({ bytes: item.bytes, max: limits.maxLineBytes }, "request line over the limit discarded");
      await send(dialect.overflowFrame(item.bytes, limits.maxLineBytes), null);
      return;
    }
    const parsed = dialect.parseLine(item.text);
    if (!parsed.batch) {
      const entry = parsed.item;
      if (entry.kind === "reject") {
        logger.debug({ reason: entry.reason }, "invalid request line");
        if (entry.frame !== null) await send(entry.frame, null);
        return;
      }
      const refused = refusal(entry);
      if (refused !== undefined) {
        // Awaited: a host that floods us and reads nothing stalls its own writes, not our memory.
        if (refused !== null) await send(refused, entry.id);
        return;
      }
      // Not awaited: requests run concurrently; the answer is written when it is ready.
      void start(entry, true);
      return;
    }
    // A batch: every call starts now; the answers leave together as one array once all are done.
    const answers = parsed.items.map((entry) => {
      if (entry.kind === "call") {
        const refused = refusal(entry);
        return refused === undefined ? start(entry, false) : Promise.resolve(refused);
      }
      logger.debug({ reason: entry.reason }, "invalid batch entry");
      return Promise.resolve(entry.frame);
    });
    const write = Promise.all(answers).then(async (frames) => {
      const present = frames.filter((frame): frame is object => frame !== null);
      // An all-notification batch gets no answer at all (seed 003).
      if (present.length > 0) await send(present, null);
    });
    batchWrites.add(write);
    void write.finally(() => batchWrites.delete(write));
  };

  const readLoop = async (): Promise<void> => {
    try {
      for await (const item of readLines(options.input, limits.maxLineBytes)) {
        if (stopReason !== null) return;
        await handleLine(item);
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
  await settlesWithin(Promise.all([...batchWrites]), limits.flushTimeoutMs);
  const flushed = await writer.close(limits.flushTimeoutMs);
  if (!flushed) logger.warn({ stats: writer.stats }, "output not fully flushed before the timeout");
  logger.debug({ stats: writer.stats }, "stdio writer closed");
  return { exitCode: 0, reason: stopReason ?? "stopped", flushed };
}

function busyError(limit: number): RuntimeError {
  return new RuntimeError("busy", `Too many requests in flight (the limit is ${limit}): wait for answers or cancel some, then send it again`, { details: { max_in_flight: limit } });
}

/** A message that cannot be serialised (a BigInt, a cycle) is logged, never a crash. */
function encode(frame: object, id: RequestId | null, logger: Logger): string | null {
  try {
    return `${JSON.stringify(frame)}\n`;
  } catch (error) {
    logger.error({ err: error, id }, "could not serialise an outbound message");
    return null;
  }
}

/** What an answer that could not be serialised becomes: the host still gets an answer for its id. */
function internalErrorLine(dialect: StdioDialect, id: RequestId | null): string {
  const error = new RuntimeError("internal_error", "Internal error: the response could not be serialised");
  return `${JSON.stringify(dialect.errorFrame(id, error, error))}\n`;
}
