import type { TurnOutcome } from "../../agent/turn-outcome.js";
import { toRuntimeError } from "../../shared/runtime-error.js";
import { HttpError, toOpenAiError } from "../http-error.js";
import type { TurnResponder } from "../responder/dialect-turn.js";
import { dataFrame, KEEP_ALIVE_FRAME, namedFrame } from "../sse/sse-frames.js";
import type { StartTurn } from "./chat-turn.js";
import { assignCompletionId, chunkObject, completionObject, openAiFinishReason, openAiUsage, resultFields, toolCallChunks, usageChunk, type CompletionIdentity } from "./completion.js";
import { DONE_FRAME, framesFor, type FrameContext } from "./event-frames.js";

export interface ChatAnswer {
  start: StartTurn;
  identity: CompletionIdentity;
  /** The seed 001 stream (named AgentLoop events too). */
  events: boolean;
  /** `return_progress`: prompt_progress chunks while a long prompt is read. */
  returnProgress: boolean;
  includeUsage: boolean;
  degradationTier: () => string;
}

/** An over-long conversation is OpenAI's 400 `context_length_exceeded` naming `messages`. */
function refusal(error: unknown): unknown {
  const runtime = toRuntimeError(error);
  return runtime.code === "context_overflow" ? new HttpError("context_length_exceeded", runtime.message, "messages") : error;
}

/**
 * Chat completions' answer to a turn: a `chat.completion`, or its chunks. A quiet stream gets an
 * SSE comment (OpenAI clients know no keep-alive event). A failure after the start is sent as
 * `data: {"error": {...}}` (what OpenAI clients understand) and the stream ends without [DONE].
 */
export function chatResponder(answer: ChatAnswer): TurnResponder {
  const { identity } = answer;
  return ({ send }) => {
    const ctx: FrameContext = { identity, events: answer.events, progress: answer.returnProgress ? { stepStartedAt: performance.now() } : null, announced: false };
    return {
      run: answer.start,
      open: () => undefined,
      onEvent: (event) => {
        if (send !== null) for (const frame of framesFor(event, ctx)) send(frame);
      },
      heartbeat: () => KEEP_ALIVE_FRAME,
      refusal,
      finish: (outcome) => {
        if (send === null) {
          assignCompletionId(identity, outcome.trace_id);
          return completionObject(identity, outcome, answer.degradationTier());
        }
        finishStream(send, ctx, outcome, answer);
        return undefined;
      },
      fail: (error) => {
        const mapped = toOpenAiError(error);
        send?.(dataFrame({ error: { ...mapped.body.error, ...(identity.requestId === undefined ? {} : { request_id: identity.requestId }) } }));
      },
    };
  };
}

function finishStream(send: (frame: string) => void, ctx: FrameContext, result: TurnOutcome, answer: ChatAnswer): void {
  if (!ctx.announced) {
    // A turn that never announced itself (no run_start): still a well-formed stream.
    assignCompletionId(ctx.identity, result.trace_id);
    send(dataFrame(chunkObject(ctx.identity, { role: "assistant", content: "" })));
  }
  for (const chunk of toolCallChunks(ctx.identity, result.tool_calls ?? [])) send(dataFrame(chunk));
  send(dataFrame(chunkObject(ctx.identity, {}, openAiFinishReason(result))));
  if (answer.includeUsage) send(dataFrame(usageChunk(ctx.identity, openAiUsage(result.usage))));
  if (ctx.events) {
    // The reasoning went out as chunks already.
    const completion = completionObject(ctx.identity, result, answer.degradationTier(), "");
    send(namedFrame("result", { ...completion, ...resultFields(result) }));
  }
  send(DONE_FRAME);
}
