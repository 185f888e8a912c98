import { toRuntimeError } from "../../shared/runtime-error.js";
import { HttpError, toOpenAiError } from "../http-error.js";
import { typedEventSink, type TurnResponder } from "../responder/dialect-turn.js";
import { namedFrame } from "../sse/sse-frames.js";
import type { RunTurn } from "../sse/turn-stream.js";
import { MessageBuilder, type MessageIdentity, type ThinkingDisplay } from "./message-builder.js";

export interface MessageAnswer {
  run: RunTurn;
  identity: MessageIdentity;
  thinking: ThinkingDisplay;
  warnings: string[];
  degradationTier: () => string;
}

/** The API's `ping` event: what the stream sends while the model is silent (a long prompt evaluating). */
const PING_FRAME = namedFrame("ping", { type: "ping" });

/** An over-long conversation is a 400 naming `messages`. */
function refusal(error: unknown): unknown {
  const runtime = toRuntimeError(error);
  if (runtime.code === "context_overflow") return new HttpError("context_length_exceeded", `messages: ${runtime.message}`, "messages");
  return error;
}

/**
 * The Messages API's answer to a turn: a Message, or its SSE events. A failure after the start is
 * an `error` event, never a cut stream (none when the client went away or the server stopped).
 */
export function messagesResponder(answer: MessageAnswer): TurnResponder {
  return ({ send }) => {
    const builder = new MessageBuilder(answer.identity, typedEventSink(send), answer.thinking, answer.degradationTier, answer.warnings);
    return {
      run: answer.run,
      open: () => builder.start(),
      onEvent: (event) => builder.onAgentEvent(event),
      heartbeat: () => PING_FRAME,
      refusal,
      finish: (outcome) => builder.finish(outcome),
      fail: (error, aborted) => {
        const mapped = toOpenAiError(error);
        if (mapped.body.error.code === "cancelled" && aborted) return;
        builder.fail(mapped.status === 503 ? "overloaded_error" : "api_error", mapped.body.error.message);
      },
    };
  };
}
