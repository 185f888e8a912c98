// Errors for requests passed through to an OpenAI-compatible upstream on a client's behalf
// (embeddings, text completions): when the upstream refuses the request itself (400, 422: a
// chat-only model asked to embed, an unknown parameter), that is the client's 400, not a broken
// engine. Everything else keeps the engine mapping of openai-errors.ts.
import { BadRequestError, UnprocessableEntityError } from "openai";
import { RuntimeError } from "../../shared/runtime-error.js";
import { toEngineError, type UpstreamContext } from "./openai-errors.js";

export function toPassthroughError(err: unknown, context: UpstreamContext, aborted: boolean): RuntimeError {
  if (!aborted && (err instanceof BadRequestError || err instanceof UnprocessableEntityError)) {
    const body = (typeof err.error === "object" && err.error !== null ? err.error : {}) as { message?: unknown; param?: unknown };
    const message = typeof body.message === "string" && body.message !== "" ? body.message : err.message;
    return new RuntimeError("invalid_request", `The server at ${context.baseUrl} refused the request for model "${context.model}" (HTTP ${err.status}): ${message}`, {
      cause: err,
      details: typeof body.param === "string" ? { param: body.param } : {},
    });
  }
  return toEngineError(err, context, aborted);
}
