import type { Logger } from "pino";
import { toRuntimeError } from "../../shared/runtime-error.js";
import { HttpError, toOpenAiError } from "../http-error.js";
import { namedFrame, SSE_HEADERS } from "../sse/sse-frames.js";
import { firstStepOrMemoryWait, startTurnStream, turnFrameStream, type RunTurn } from "../sse/turn-stream.js";
import { MessageBuilder, type MessageEvent, type MessageIdentity, type ThinkingDisplay } from "./message-builder.js";

export interface RunMessageOptions {
  run: RunTurn;
  identity: MessageIdentity;
  thinking: ThinkingDisplay;
  warnings: string[];
  controller: AbortController;
  /** Called once the turn has settled (counts, listeners). */
  release: () => void;
  degradationTier: () => string;
  logger: Logger;
  stream: { keepAliveMs: number; coalesceMs: number; maxPendingBytes: number } | null;
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
 * Runs the turn and answers: a Message, or the Messages SSE stream. The stream's HTTP answer
 * starts at the first model step (`llm_start`), after the context was fitted: a request that
 * cannot run (too long, model missing) still gets a real HTTP error status. After that a failure
 * is an `error` event, never a cut stream; a client that goes away cancels the turn.
 */
export async function runMessage(options: RunMessageOptions): Promise<Response> {
  if (options.stream === null) return runJson(options);
  return runStream(options, options.stream);
}

async function runJson(options: RunMessageOptions): Promise<Response> {
  const builder = new MessageBuilder(options.identity, () => undefined, options.thinking, options.degradationTier, options.warnings);
  try {
    const outcome = await options.run({ signal: options.controller.signal, emit: (event) => builder.onAgentEvent(event) }).catch((error: unknown) => {
      throw refusal(error);
    });
    return Response.json(builder.finish(outcome));
  } finally {
    options.release();
  }
}

async function runStream(options: RunMessageOptions, settings: NonNullable<RunMessageOptions["stream"]>): Promise<Response> {
  const { controller, logger } = options;
  const frames = turnFrameStream(settings, controller, logger, PING_FRAME);
  const send = (event: MessageEvent): void => frames.push(namedFrame(event.type, event));
  const builder = new MessageBuilder(options.identity, send, options.thinking, options.degradationTier, options.warnings);
  builder.start();
  const { turn } = await startTurnStream(frames, {
    run: options.run,
    controller,
    coalesceMs: settings.coalesceMs,
    startEvent: firstStepOrMemoryWait,
    sink: (event) => builder.onAgentEvent(event),
    release: options.release,
    refusal,
  });
  turn
    .then(
      (outcome) => {
        builder.finish(outcome);
      },
      (error: unknown) => {
        const mapped = toOpenAiError(error);
        if (mapped.body.error.code === "cancelled" && controller.signal.aborted) return;
        if (mapped.status >= 500) logger.error({ err: error }, "turn failed mid-stream");
        builder.fail(mapped.status === 503 ? "overloaded_error" : "api_error", mapped.body.error.message);
      },
    )
    .finally(() => {
      frames.end();
      options.release();
    })
    .catch(() => undefined);
  return new Response(frames.body, { status: 200, headers: SSE_HEADERS });
}
