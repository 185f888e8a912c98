import type { Readable, Writable } from "node:stream";
import type { Logger } from "pino";
import { settlesWithin } from "../shared/abort.js";
import type { LineItem } from "../shared/line-splitter.js";
import { runLineServer, type LineServerResult } from "../serving/line-server.js";
import type { StdioLimits } from "../serving/stdio-limits.js";
import { createCallRunner, type CallRunner } from "./call-runner.js";
import type { StdioDialect } from "./dialect.js";
import { createDispatcher } from "./dispatcher.js";
import { InFlightRequests } from "./in-flight.js";
import type { MethodTable } from "./method.js";
import { OutboundWriter } from "./outbound-writer.js";
import { v1Dialect } from "./v1/v1-dialect.js";

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

export type StdioServerResult = LineServerResult;

/**
 * The v1 and JSON-RPC dialects as a door on the line server (serving/line-server.ts, which reads,
 * stops and flushes): each request is answered concurrently (the call runner), and every outbound
 * message leaves through one bounded writer (events are droppable, answers never). Stops on stdin
 * EOF, `shutdown` or the abort signal.
 */
export function runStdioServer(options: StdioServerOptions): Promise<StdioServerResult> {
  const { logger, limits } = options;
  const dialect = options.dialect ?? v1Dialect;
  return runLineServer({ input: options.input, logger, limits, signal: options.signal }, (control) => {
    const writer = new OutboundWriter(options.output, { maxMessages: limits.writerQueueSize, logger });
    const inFlight = new InFlightRequests();
    const methods = options.methods({ requestShutdown: control.requestStop, inFlight });
    const runner = createCallRunner({ dialect, methods, dispatch: createDispatcher(methods), inFlight, writer, logger, maxInFlight: limits.maxInFlight });
    /** Batch answers are written after their calls settle; shutdown waits for those writes too. */
    const batchWrites = new Set<Promise<void>>();
    return {
      name: "stdio server",
      output: writer,
      handle: (item) => handleStdioLine(item, { dialect, runner, logger, maxLineBytes: limits.maxLineBytes, batchWrites }),
      work: { settled: () => inFlight.settled(), abortAll: (reason) => inFlight.abortAll(reason), describe: () => ({ pending: inFlight.list().map((entry) => entry.id) }) },
      cancelMessage: "cancelling requests still in flight at shutdown",
      close: async () => void (await settlesWithin(Promise.all([...batchWrites]), limits.flushTimeoutMs)),
      outputStats: () => ({ stats: writer.stats }),
    };
  });
}

interface LineContext {
  dialect: StdioDialect;
  runner: CallRunner;
  logger: Logger;
  maxLineBytes: number;
  batchWrites: Set<Promise<void>>;
}

/** The message layer of the v1 and JSON-RPC dialects: one line (a call, a batch, or a line to refuse) to the call runner. */
async function handleStdioLine(item: LineItem, context: LineContext): Promise<void> {
  const { dialect, runner, logger } = context;
  if (item.kind === "overflow") {
    logger.warn({ bytes: item.bytes, max: context.maxLineBytes }, "request line over the limit discarded");
    await runner.send(dialect.overflowFrame(item.bytes, context.maxLineBytes), null);
    return;
  }
  const parsed = dialect.parseLine(item.text);
  if (!parsed.batch) {
    const entry = parsed.item;
    if (entry.kind === "reject") {
      logger.debug({ reason: entry.reason }, "invalid request line");
      if (entry.frame !== null) await runner.send(entry.frame, null);
      return;
    }
    const refused = runner.refusal(entry);
    if (refused !== undefined) {
      // Awaited: a host that floods us and reads nothing stalls its own writes, not our memory.
      if (refused !== null) await runner.send(refused, entry.id);
      return;
    }
    // Not awaited: requests run concurrently; the answer is written when it is ready.
    void runner.start(entry, true);
    return;
  }
  // A batch: every call starts now; the answers leave together as one array once all are done.
  const answers = parsed.items.map((entry) => {
    if (entry.kind === "call") {
      const refused = runner.refusal(entry);
      return refused === undefined ? runner.start(entry, false) : Promise.resolve(refused);
    }
    logger.debug({ reason: entry.reason }, "invalid batch entry");
    return Promise.resolve(entry.frame);
  });
  const write = Promise.all(answers).then(async (frames) => {
    const present = frames.filter((frame): frame is object => frame !== null);
    // An all-notification batch gets no answer at all (seed 003).
    if (present.length > 0) await runner.send(present, null);
  });
  context.batchWrites.add(write);
  void write.finally(() => context.batchWrites.delete(write));
}
