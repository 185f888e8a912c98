import type { Readable, Writable } from "node:stream";
import type { Logger } from "pino";
import { settlesWithin } from "../shared/abort.js";
import type { LineItem } from "../shared/line-splitter.js";
import { createCallRunner, type CallRunner } from "./call-runner.js";
import type { StdioDialect } from "./dialect.js";
import { createDispatcher } from "./dispatcher.js";
import { InFlightRequests } from "./in-flight.js";
import type { MethodTable } from "./method.js";
import { OutboundWriter } from "./outbound-writer.js";
import { flushOutput, settleInFlight } from "../stdio/shutdown-sequence.js";
import type { StdioLimits } from "../stdio/stdio-limits.js";
import { runStdioReadLoop } from "../stdio/stdio-read-loop.js";
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

export interface StdioServerResult {
  exitCode: number;
  reason: string;
  flushed: boolean;
}

/**
 * The stdio NDJSON server for the v1 and JSON-RPC dialects: reads capped lines (the read loop),
 * answers each request concurrently (the call runner), and writes every outbound message through
 * one bounded writer (events are droppable, answers never). Stops on stdin EOF, `shutdown` or the
 * abort signal with the shutdown sequence every stdio server shares: no new requests, in-flight
 * work finishes (bounded) or is cancelled, the writer drains.
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
  const runner = createCallRunner({ dialect, methods, dispatch: createDispatcher(methods), inFlight, writer, logger, maxInFlight: limits.maxInFlight });
  const onAbort = (): void => requestShutdown(typeof options.signal?.reason === "string" ? options.signal.reason : "signal");
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener("abort", onAbort, { once: true });

  /** Batch answers are written after their calls settle; shutdown waits for those writes too. */
  const batchWrites = new Set<Promise<void>>();
  const handleLine = (item: LineItem): Promise<void> => handleStdioLine(item, { dialect, runner, logger, maxLineBytes: limits.maxLineBytes, batchWrites });

  void runStdioReadLoop({ input: options.input, maxLineBytes: limits.maxLineBytes, logger, stopping: () => stopReason !== null, handle: handleLine }).then((ended) => {
    if (ended !== null) requestShutdown(ended);
  });

  await stopped;
  options.signal?.removeEventListener("abort", onAbort);
  const work = { settled: () => inFlight.settled(), abortAll: (reason: string) => inFlight.abortAll(reason), describe: () => ({ pending: inFlight.list().map((entry) => entry.id) }) };
  await settleInFlight(work, limits.shutdownGraceMs, logger, "cancelling requests still in flight at shutdown");
  await settlesWithin(Promise.all([...batchWrites]), limits.flushTimeoutMs);
  const flushed = await flushOutput(writer, limits.flushTimeoutMs, logger, () => ({ stats: writer.stats }));
  logger.debug({ stats: writer.stats }, "stdio writer closed");
  return { exitCode: 0, reason: stopReason ?? "stopped", flushed };
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
