// The one place where OpenAI SDK / fetch failures become our typed RuntimeError codes, so the
// supervisor and every front door can act on `code` instead of parsing messages.
import {
  APIConnectionError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  NotFoundError,
  PermissionDeniedError,
} from "openai";
import { RuntimeError } from "../../shared/runtime-error.js";

export interface UpstreamContext {
  baseUrl: string;
  model: string;
}

export function cancelledError(cause?: unknown): RuntimeError {
  return new RuntimeError("cancelled", "Request cancelled", cause === undefined ? {} : { cause });
}

/** The innermost useful message: undici hides ECONNREFUSED etc. in `cause`. */
function describeCause(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    parts.push(typeof code === "string" ? `${current.message} (${code})` : current.message);
    current = current.cause;
  }
  return parts.filter((part) => part !== "").join(": ") || String(err);
}

/** The upstream's own words, without the SDK's "<status> " prefix when it adds one. */
function upstreamMessage(err: { error?: unknown; message: string }): string {
  const body: unknown = err.error;
  if (typeof body === "object" && body !== null) {
    const message = (body as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") return message;
  }
  return err.message;
}

/**
 * Maps anything thrown while talking to an OpenAI-compatible server.
 * `aborted` says whether the caller's signal fired: then it is a cancel, whatever the symptom.
 */
export function toEngineError(err: unknown, context: UpstreamContext, aborted: boolean): RuntimeError {
  if (err instanceof RuntimeError) return err;
  if (aborted || err instanceof APIUserAbortError) return cancelledError(err);
  const where = context.baseUrl;
  // APIConnectionTimeoutError is a subclass: a timeout is "unreachable" too.
  if (err instanceof APIConnectionError) {
    return new RuntimeError("engine_unavailable", `Cannot reach the OpenAI-compatible server at ${where}: ${describeCause(err)}`, {
      cause: err,
      details: { base_url: where },
    });
  }
  if (err instanceof AuthenticationError || err instanceof PermissionDeniedError) {
    return new RuntimeError(
      "engine_auth",
      `The server at ${where} rejected the API key (HTTP ${err.status}): ${upstreamMessage(err)}`,
      { cause: err, details: { base_url: where, status: err.status } },
    );
  }
  if (err instanceof NotFoundError) {
    return new RuntimeError(
      "model_missing",
      `Model "${context.model}" not found at ${where} (HTTP 404: ${upstreamMessage(err)}); check the model name and that base_url ends in /v1`,
      { cause: err, details: { base_url: where, model: context.model, status: 404 } },
    );
  }
  if (err instanceof APIError) {
    const apiError = err as APIError<number | undefined>;
    // status undefined = an error event inside the SSE stream (llama-server `data: {"error": ...}`).
    const status = apiError.status === undefined ? "error event in stream" : `HTTP ${apiError.status}`;
    return new RuntimeError("engine_error", `The server at ${where} failed (${status}): ${upstreamMessage(apiError)}`, {
      cause: err,
      details: { base_url: where, ...(apiError.status !== undefined ? { status: apiError.status } : {}) },
    });
  }
  // Body read failures ("terminated" when the socket dies), unparsable SSE JSON, ...
  return new RuntimeError("engine_error", `The stream from ${where} broke: ${describeCause(err)}`, {
    cause: err,
    details: { base_url: where },
  });
}
