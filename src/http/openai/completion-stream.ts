import type { Logger } from "pino";
import type { CompletionChunk } from "../../engine/completion-types.js";
import { toOpenAiError } from "../http-error.js";
import { FrameStream } from "../sse/frame-stream.js";
import { dataFrame, SSE_HEADERS } from "../sse/sse-frames.js";
import { DONE_FRAME } from "./event-frames.js";
import { textCompletionChunk, textCompletionUsageChunk, UsageTally, type TextCompletionIdentity } from "./text-completion.js";

export interface StreamCompletionOptions {
  chunks: AsyncIterable<CompletionChunk>;
  identity: TextCompletionIdentity;
  includeUsage: boolean;
  /** Aborting it stops the engine (the client went away or fell too far behind). */
  controller: AbortController;
  release: () => void;
  keepAliveMs: number;
  maxPendingBytes: number;
  logger: Logger;
  /** The HTTP request's id, in a mid-stream error's `error.request_id`. */
  requestId?: string | undefined;
}

/**
 * `text_completion` chunks as standard SSE, then the final chunk (empty text, finish_reason), the
 * usage chunk when asked, and `data: [DONE]`. The response starts with the engine's first chunk,
 * so a request the engine refuses up front (a suffix the model cannot infill, a model that fails
 * to load) still gets a real HTTP error status; a failure after that is one
 * `data: {"error": ...}` frame and the stream ends without [DONE].
 */
export async function streamCompletion(options: StreamCompletionOptions): Promise<Response> {
  const { identity, controller, logger } = options;
  const iterator = options.chunks[Symbol.asyncIterator]();
  let first: IteratorResult<CompletionChunk>;
  try {
    first = await iterator.next();
  } catch (error) {
    options.release();
    throw error;
  }
  const frames = new FrameStream({
    keepAliveMs: options.keepAliveMs,
    maxPendingBytes: options.maxPendingBytes,
    onCancel: (reason) => {
      if (!controller.signal.aborted) logger.info({ reason }, "completion stream cancelled; stopping the engine");
      controller.abort(reason);
    },
  });
  const usage = new UsageTally();
  let finished = false;
  const send = (chunk: CompletionChunk): void => {
    if (chunk.type === "text") frames.push(dataFrame(textCompletionChunk(identity, chunk.delta)));
    else if (chunk.type === "usage") usage.add(chunk.inputTokens, chunk.outputTokens);
    else {
      finished = true;
      frames.push(dataFrame(textCompletionChunk(identity, "", chunk.finishReason)));
      if (options.includeUsage) frames.push(dataFrame(textCompletionUsageChunk(identity, usage.toJSON())));
      frames.push(DONE_FRAME);
    }
  };
  void (async () => {
    try {
      if (first.done !== true) send(first.value);
      for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) send(next.value);
      if (!finished) throw new Error("the engine ended the completion without a finish");
    } catch (error) {
      const mapped = toOpenAiError(error);
      if (mapped.status >= 500 && mapped.body.error.code !== "cancelled") logger.error({ err: error }, "completion failed mid-stream");
      frames.push(dataFrame({ error: { ...mapped.body.error, ...(options.requestId === undefined ? {} : { request_id: options.requestId }) } }));
    } finally {
      frames.end();
      options.release();
    }
  })();
  return new Response(frames.body, { status: 200, headers: SSE_HEADERS });
}
