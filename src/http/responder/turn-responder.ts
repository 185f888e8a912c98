import type { Context } from "hono";
import type { Logger } from "pino";
import { toOpenAiError } from "../http-error.js";
import type { InFlightWork } from "../request/in-flight-work.js";
import { startRequestWork, type RequestWork } from "../request/request-work.js";
import { KEEP_ALIVE_FRAME, SSE_HEADERS } from "../sse/sse-frames.js";
import { startTurnStream, turnFrameStream, type TurnStreamSettings } from "../sse/turn-stream.js";
import type { DialectTurn, TurnResponder } from "./dialect-turn.js";

/** What every dialect's turn is answered with: the server's in-flight count, its shutdown, its stream settings. */
export interface TurnServing {
  inFlight: InFlightWork;
  shutdownSignal?: AbortSignal | undefined;
  stream: TurnStreamSettings;
}

export interface TurnAnswer {
  /** The client asked for a stream (SSE); else one JSON body. */
  stream: boolean;
  responder: TurnResponder;
  logger: Logger;
  /** What the request holds (a session gate), let go once the turn has settled. */
  onDone?: () => void;
}

/**
 * The one HTTP answer to an agent turn, whatever the dialect. The turn is in-flight work aborted
 * by the client leaving or the server stopping. JSON: the dialect's body once the turn ended. A
 * stream: its HTTP answer starts at the turn's first model step (or a wait for memory; see
 * startTurnStream), so a refusal before it (a conversation too long for the context, a model that
 * cannot load) is a real HTTP status in every dialect; after it a failure is the dialect's own
 * last frames, and a client that goes away (or reads too slowly) cancels the turn.
 */
export async function respondToTurn(c: Context, serving: TurnServing, answer: TurnAnswer): Promise<Response> {
  const work = startRequestWork({ requestSignal: c.req.raw.signal, shutdownSignal: serving.shutdownSignal, inFlight: serving.inFlight, logger: answer.logger, ...(answer.onDone === undefined ? {} : { onDone: answer.onDone }) });
  return answer.stream ? streamAnswer(work, serving.stream, answer) : jsonAnswer(work, answer);
}

async function jsonAnswer(work: RequestWork, answer: TurnAnswer): Promise<Response> {
  const { signal } = work.controller;
  const dialect = answer.responder({ send: null, signal });
  try {
    const outcome = await dialect.run({ signal, emit: (event) => dialect.onEvent(event) }).catch((error: unknown) => {
      throw dialect.refusal(error);
    });
    return Response.json(await dialect.finish(outcome));
  } finally {
    work.finish();
  }
}

async function streamAnswer(work: RequestWork, settings: TurnStreamSettings, answer: TurnAnswer): Promise<Response> {
  const { controller } = work;
  const { logger } = answer;
  const made: { dialect: DialectTurn | null } = { dialect: null };
  const frames = turnFrameStream(settings, controller, logger, () => made.dialect?.heartbeat() ?? KEEP_ALIVE_FRAME);
  const dialect = answer.responder({ send: (frame) => frames.push(frame), signal: controller.signal });
  made.dialect = dialect;
  dialect.open();
  // Either the first model step began, or the turn ended without one: the stream answers both.
  const { turn } = await startTurnStream(frames, {
    run: dialect.run,
    controller,
    coalesceMs: settings.coalesceMs,
    sink: (event) => dialect.onEvent(event),
    release: work.finish,
    refusal: (error) => dialect.refusal(error),
  });
  turn
    .then(
      async (outcome) => {
        await dialect.finish(outcome);
      },
      (error: unknown) => {
        const mapped = toOpenAiError(error);
        if (mapped.status >= 500 && mapped.body.error.code !== "cancelled") logger.error({ err: error }, "turn failed mid-stream");
        dialect.fail(error, controller.signal.aborted);
      },
    )
    .catch((error: unknown) => {
      // Finishing failed (a stored response on a full disk): the client still gets a well-formed end.
      logger.error({ err: error }, "response could not be completed");
      dialect.fail(error, false);
    })
    .finally(() => {
      frames.end();
      work.finish();
    })
    .catch(() => undefined);
  return new Response(frames.body, { status: 200, headers: SSE_HEADERS });
}
