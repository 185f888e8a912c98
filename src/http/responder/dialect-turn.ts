import type { AgentEvent } from "../../agent/events.js";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { namedFrame } from "../sse/sse-frames.js";
import type { RunTurn } from "../sse/turn-stream.js";

/** Where a stream's frames go (SSE text, already framed); null: the answer is one JSON body. */
export type FrameSink = ((frame: string) => void) | null;

/** A builder's sink for events named by their `type` (Responses, Messages): each an SSE event of that name; dropped for JSON. */
export function typedEventSink(send: FrameSink): (event: { type: string }) => void {
  return send === null ? () => undefined : (event) => send(namedFrame(event.type, event));
}

/**
 * One turn's answer in a dialect's terms: what turn-responder.ts asks of chat completions,
 * Responses and Messages (and of any dialect added later). The responder owns the rest: the
 * request's abort and in-flight count, when the HTTP answer starts, the keep-alives, the order of
 * the end.
 */
export interface DialectTurn {
  /** The turn to run (a dialect may wrap it: Responses connects the request's MCP servers first). */
  run: RunTurn;
  /** Stream only: the frames sent before anything ran (`response.created`, `message_start`). */
  open(): void;
  /** Each event of the turn (merged text deltas): the stream's frames, the JSON body's content. */
  onEvent(event: AgentEvent): void;
  /** Stream only: the frame a quiet stream gets (a comment, `ping`, `response.in_progress`). */
  heartbeat(): string;
  /** A failure before the answer started, in the dialect's terms (an HTTP status follows from it). */
  refusal(error: unknown): unknown;
  /** The turn's outcome: the JSON body; in a stream its last frames are sent (the result is unused). */
  finish(outcome: TurnOutcome): unknown;
  /** Stream only: a failure after the answer started, as the stream's last frames. `aborted`: the request's work was cancelled (client gone, shutdown). */
  fail(error: unknown, aborted: boolean): void;
}

/** Makes the dialect's answer to one turn: `send` is the stream's sink (null for JSON); `signal` aborts with the request. */
export type TurnResponder = (answer: { send: FrameSink; signal: AbortSignal }) => DialectTurn;
