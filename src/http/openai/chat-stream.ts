import type { Logger } from "pino";
import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { toOpenAiError } from "../http-error.js";
import type { FrameStream } from "../sse/frame-stream.js";
import { dataFrame, namedFrame, SSE_HEADERS } from "../sse/sse-frames.js";
import { startTurnStream, turnFrameStream } from "../sse/turn-stream.js";
import type { StartTurn } from "./chat-turn.js";
import { assignCompletionId, completionObject, chunkObject, openAiFinishReason, openAiUsage, resultFields, toolCallChunks, usageChunk, type CompletionIdentity } from "./completion.js";
import { DONE_FRAME, framesFor, type FrameContext } from "./event-frames.js";

export interface StreamTurnOptions {
  start: StartTurn;
  identity: CompletionIdentity;
  events: boolean;
  /** `return_progress`: prompt_progress chunks while a long prompt is read. */
  returnProgress: boolean;
  includeUsage: boolean;
  controller: AbortController;
  keepAliveMs: number;
  /** Text deltas within this many ms leave as one chunk (0 = one per engine chunk). */
  coalesceMs: number;
  maxPendingBytes: number;
  degradationTier: () => string;
  release: () => void;
  logger: Logger;
}

/**
 * Runs the turn and answers with its SSE stream. The response starts at `run_start`: a turn that
 * fails before it (bad session id, nothing to resume) still gets a real HTTP error status. An
 * error after that is sent as `data: {"error": {...}}` (what OpenAI clients understand) and the
 * stream ends without [DONE].
 */
export async function streamTurn(options: StreamTurnOptions): Promise<Response> {
  const { identity, controller, logger } = options;
  const ctx: FrameContext = { identity, events: options.events, progress: options.returnProgress ? { stepStartedAt: performance.now() } : null };
  const frames = turnFrameStream(options, controller, logger);
  const { first: outcome, turn } = await startTurnStream(frames, {
    run: options.start,
    controller,
    coalesceMs: options.coalesceMs,
    startEvent: "run_start",
    sink: (event) => {
      for (const frame of framesFor(event, ctx)) frames.push(frame);
    },
    release: options.release,
  });
  if (outcome !== "started") {
    // A turn that never announced itself (no run_start): still a well-formed stream.
    assignCompletionId(identity, outcome.trace_id);
    frames.push(dataFrame(chunkObject(identity, { role: "assistant", content: "" })));
  }
  turn.then(
    (result) => finish(frames, ctx, result, options),
    (error: unknown) => {
      const mapped = toOpenAiError(error);
      if (mapped.status >= 500 && mapped.body.error.code !== "cancelled") logger.error({ err: error }, "turn failed mid-stream");
      frames.push(dataFrame({ error: { ...mapped.body.error, ...(identity.requestId === undefined ? {} : { request_id: identity.requestId }) } }));
      frames.end();
    },
  ).finally(options.release).catch(() => undefined);
  return new Response(frames.body, { status: 200, headers: SSE_HEADERS });
}

function finish(frames: FrameStream, ctx: FrameContext, result: TurnOutcome, options: StreamTurnOptions): void {
  for (const chunk of toolCallChunks(ctx.identity, result.tool_calls ?? [])) frames.push(dataFrame(chunk));
  frames.push(dataFrame(chunkObject(ctx.identity, {}, openAiFinishReason(result))));
  if (options.includeUsage) frames.push(dataFrame(usageChunk(ctx.identity, openAiUsage(result.usage))));
  if (ctx.events) {
    // The reasoning went out as chunks already.
    const completion = completionObject(ctx.identity, result, options.degradationTier(), "");
    frames.push(namedFrame("result", { ...completion, ...resultFields(result) }));
  }
  frames.push(DONE_FRAME);
  frames.end();
}
