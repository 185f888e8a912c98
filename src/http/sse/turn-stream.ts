import type { Logger } from "pino";
import { withCoalescedEmit } from "../../agent/delta-coalescer.js";
import type { AgentEvent, EmitEvent } from "../../agent/events.js";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { FrameStream } from "./frame-stream.js";

/** A turn run with a cancellation signal and an event sink (what each dialect's route hands over). */
export type RunTurn = (options: { signal: AbortSignal; emit: EmitEvent }) => Promise<TurnOutcome>;

export interface TurnStreamSettings {
  keepAliveMs: number;
  /** Text deltas within this many ms leave as one event (0 = one per engine chunk). */
  coalesceMs: number;
  maxPendingBytes: number;
}

/** The SSE frame stream of one turn: a client that goes away (or reads too slowly) cancels the turn. */
export function turnFrameStream(settings: TurnStreamSettings, controller: AbortController, logger: Logger, keepAliveFrame?: string | (() => string)): FrameStream {
  return new FrameStream({
    keepAliveMs: settings.keepAliveMs,
    ...(keepAliveFrame === undefined ? {} : { keepAliveFrame }),
    maxPendingBytes: settings.maxPendingBytes,
    onCancel: (reason) => {
      if (!controller.signal.aborted) logger.info({ reason }, "stream cancelled; cancelling the turn");
      controller.abort(reason);
    },
  });
}

/**
 * Where every dialect's stream starts its HTTP answer: the first model step, after the context was
 * fitted, so that a refusal before it (a conversation too long for the context, a model that
 * cannot load) is a real HTTP status, as OpenAI's and Anthropic's APIs answer it; or a wait for
 * memory, whose end nobody knows (up to llama.load_queue.timeout_s): the answer starts then, so
 * that its keep-alives reach the client, and a failure after it (`busy` past the queue's timeout)
 * is the stream's error event.
 */
function firstStepOrMemoryWait(event: AgentEvent): boolean {
  return event.event === "llm_start" || (event.event === "model_load" && event.state === "queued");
}

export interface StartTurnStreamOptions {
  run: RunTurn;
  controller: AbortController;
  coalesceMs: number;
  sink: EmitEvent;
  /** Called when the turn fails before it started (the turn's slot is freed). */
  release: () => void;
  /** Maps a failure before the start to the dialect's refusal (an HTTP error status). */
  refusal?: (error: unknown) => unknown;
}

/**
 * Starts the turn, its events going to `sink` (merged while `frames` is backlogged), and waits
 * until the answer may start (firstStepOrMemoryWait) or the turn's end, whichever comes first. A
 * failure before that releases the turn, cancels the stream and throws (the refusal), so the
 * request still gets a real HTTP error status. `turn` settles the rest (a turn that ended without
 * a first step: its outcome).
 */
export async function startTurnStream(frames: FrameStream, options: StartTurnStreamOptions): Promise<{ turn: Promise<TurnOutcome> }> {
  let markStarted: () => void = () => undefined;
  const started = new Promise<"started">((resolve) => (markStarted = () => resolve("started")));
  const sink: EmitEvent = (event) => {
    options.sink(event);
    if (firstStepOrMemoryWait(event)) markStarted();
  };
  const { controller } = options;
  // Frames the client has not taken yet hold merged text back (fewer, larger chunks for a slow reader).
  const turn = withCoalescedEmit(sink, { windowMs: options.coalesceMs, busy: () => frames.backlogged }, (emit) => options.run({ signal: controller.signal, emit }));
  try {
    await Promise.race([started, turn]);
    return { turn };
  } catch (error) {
    options.release();
    frames.cancel("turn failed before it started");
    throw options.refusal === undefined ? error : options.refusal(error);
  }
}
