import type { Logger } from "pino";
import { RuntimeError, toRuntimeError } from "../shared/runtime-error.js";
import type { InboundCall, StdioDialect } from "./dialect.js";
import type { Dispatch } from "./dispatcher.js";
import type { InFlightRequests } from "./in-flight.js";
import type { RequestId } from "./messages.js";
import type { MethodTable } from "./method.js";
import type { OutboundWriter } from "./outbound-writer.js";

export interface CallRunnerOptions {
  dialect: StdioDialect;
  methods: MethodTable;
  dispatch: Dispatch;
  inFlight: InFlightRequests;
  writer: OutboundWriter;
  logger: Logger;
  /** Calls past this many in flight are refused `busy` (control methods always run). */
  maxInFlight: number;
}

/** Runs the calls of a v1 or JSON-RPC stdio server (see `createCallRunner`). */
export interface CallRunner {
  /**
   * Registers and starts a call; resolves with its answer (null: none to send). With `deliver` the
   * answer is queued on the writer before the call leaves the in-flight table, so a reader that
   * stops reading stops stdin being read too (backpressure), instead of answers piling up.
   */
  start(call: InboundCall, deliver: boolean): Promise<object | null>;
  /**
   * stdin keeps being read at the in-flight limit, so cancel, shutdown and ping always get through;
   * other calls are refused with `busy` (null: a notification, dropped; undefined: not refused).
   */
  refusal(call: InboundCall): object | null | undefined;
  /** Writes one frame (never dropped); a frame that cannot be serialised becomes an internal error for its id. */
  send(frame: object, id: RequestId | null): Promise<void>;
}

/**
 * The call runner of the v1 and JSON-RPC stdio dialects: each call runs concurrently under its own
 * AbortController, registered in the in-flight table (so `$/cancelRequest`, `cancel` and shutdown
 * reach it); its events go out droppable, its answer never dropped.
 */
export function createCallRunner(options: CallRunnerOptions): CallRunner {
  const { dialect, inFlight, writer, logger } = options;
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
      const context = { id: call.id, signal: controller.signal, log, emit, outputBusy };
      const result = await options.dispatch(call.method, params, context);
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

  const refusal = (call: InboundCall): object | null | undefined => {
    if (inFlight.size < options.maxInFlight || options.methods.get(call.method)?.control === true) return undefined;
    if (call.notification) {
      logger.warn({ method: call.method, limit: options.maxInFlight }, "notification dropped: too many requests in flight");
      return null;
    }
    return dialect.errorFrame(call.id, busyError(options.maxInFlight), undefined);
  };

  return { start, refusal, send };
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
