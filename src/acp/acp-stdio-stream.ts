import { RequestError, type AnyMessage, type Stream } from "@agentclientprotocol/sdk";
import type { Logger } from "pino";
import type { LineOutput } from "../serving/line-output.js";
import type { LineItem } from "../shared/line-splitter.js";
import type { RequestGate } from "./request-gate.js";

export interface AcpStdioStreamOptions {
  sink: LineOutput;
  gate: RequestGate;
  /** stdio.max_line_bytes: a longer line is discarded as it streams and answered, and reading goes on. */
  maxLineBytes: number;
  logger: Logger;
}

/** The SDK's stream, and the line server's side of it. */
export interface AcpStdioStream {
  stream: Stream;
  /** Resolves once the connection asks for a message and fewer than the limit of requests are open (or the stream ended). */
  admit: () => Promise<void>;
  /** One line read by the line server: to the connection as a message, or answered here when it is not one. */
  handle: (item: LineItem) => Promise<void>;
  /** Ends the stream: the connection then closes. */
  end: () => void;
}

/**
 * The SDK's `Stream` over our stdio, instead of its ndJsonStream, for the rules every stdio front
 * door keeps: lines are read by the line server (serving/line-server.ts) and handed in here one at
 * a time, capped by our splitter (the SDK's would end the connection on one long
 * line), a line that is not JSON is answered -32700 and reading goes on, every outbound message
 * leaves through one ordered sink, and a message that cannot be serialised becomes an error
 * answer for its id instead of tearing the connection down.
 */
export function acpStdioStream(options: AcpStdioStreamOptions): AcpStdioStream {
  const { sink, gate, logger } = options;
  const answerProtocolError = (error: RequestError): Promise<void> => sink.push(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: error.toErrorResponse() })}\n`);

  const decode = async (item: LineItem): Promise<AnyMessage | null> => {
    if (item.kind === "overflow") {
      logger.warn({ bytes: item.bytes, max: options.maxLineBytes }, "ACP message over the line limit discarded");
      await answerProtocolError(RequestError.invalidRequest({ bytes: item.bytes, max_line_bytes: options.maxLineBytes }, `message of ${item.bytes} bytes is over the limit of ${options.maxLineBytes} (stdio.max_line_bytes); it was discarded`));
      return null;
    }
    let value: unknown;
    try {
      value = JSON.parse(item.text);
    } catch {
      logger.debug("ACP line is not JSON");
      await answerProtocolError(RequestError.parseError());
      return null;
    }
    // Anything else that is not a request (arrays, scalars, bad shapes) the SDK answers itself.
    if (isRequest(value)) gate.received(value.id);
    return value as AnyMessage;
  };

  // The connection pulls one message at a time; the next line is read only then.
  let pullPending: (() => void) | null = null;
  let loopWaiting: (() => void) | null = null;
  let ended = false;
  const pulled = (): Promise<void> => (pullPending !== null || ended ? Promise.resolve() : new Promise((resolve) => (loopWaiting = resolve)));
  const answerPull = (): void => {
    const resolve = pullPending;
    pullPending = null;
    resolve?.();
  };
  /** No more messages: a read waiting for a pull goes on (and finds the server stopping). */
  const stop = (): void => {
    ended = true;
    const wake = loopWaiting;
    loopWaiting = null;
    wake?.();
  };

  let controller: ReadableStreamDefaultController<AnyMessage> | null = null;
  const readable = new ReadableStream<AnyMessage>(
    {
      start: (started) => void (controller = started),
      pull: () =>
        new Promise<void>((resolve) => {
          pullPending = resolve;
          const wake = loopWaiting;
          loopWaiting = null;
          wake?.();
        }),
      cancel: stop,
    },
    // Pull one message at a time: stdin is read only as fast as the connection takes messages.
    { highWaterMark: 0 },
  );

  const writable = new WritableStream<AnyMessage>({
    write: async (message) => {
      const line = encode(message, logger);
      if (line !== "") await sink.push(line);
      if (isResponse(message)) gate.answered(message.id);
    },
  });

  return {
    stream: { readable, writable },
    admit: async () => {
      await pulled();
      await gate.belowLimit();
    },
    handle: async (item) => {
      const message = await decode(item);
      if (message === null || ended) return;
      controller?.enqueue(message);
      answerPull();
    },
    end: () => {
      if (!ended) controller?.close();
      stop();
      answerPull();
    },
  };
}

/** A request as the SDK's connection sees one (the same test it applies), so it will be answered. */
function isRequest(value: unknown): value is { id: string | number | null; method: string } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  const id = record.id;
  const validId = id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
  return record.jsonrpc === "2.0" && "id" in record && typeof record.method === "string" && validId;
}

function isResponse(message: AnyMessage): message is AnyMessage & { id: string | number | null } {
  return "id" in message && !("method" in message);
}

/** One line; a message that cannot be serialised (a BigInt, a cycle) is logged, and a response becomes an internal error for its id. */
function encode(message: AnyMessage, logger: Logger): string {
  try {
    return `${JSON.stringify(message)}\n`;
  } catch (error) {
    const id = "id" in message ? message.id : null;
    logger.error({ err: error, id, method: "method" in message ? message.method : undefined }, "could not serialise an outbound ACP message");
    const internal = RequestError.internalError(undefined, "the response could not be serialised");
    return isResponse(message) ? `${JSON.stringify({ jsonrpc: "2.0", id, error: internal.toErrorResponse() })}\n` : "";
  }
}
