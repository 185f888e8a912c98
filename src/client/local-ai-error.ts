import type { WireErrorCode } from "./protocol-types.js";

/**
 * Codes the client adds to the protocol's: the child exited under a call (`process_exited`), could
 * not be spawned (`spawn_failed`), or the client was closed (`client_closed`).
 */
export type ClientErrorCode = "process_exited" | "spawn_failed" | "client_closed";

export type LocalAiErrorCode = WireErrorCode | ClientErrorCode;

/**
 * Every failure the client reports: an error frame from local-ai (its `code`, `message` and
 * `details`, exactly as sent) or one of the client's own codes. `details` keys are snake_case
 * like the wire's (`process_exited`: `exit_code`, `signal`, `stderr_tail`).
 */
export class LocalAiError extends Error {
  override readonly name = "LocalAiError";
  readonly code: LocalAiErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: LocalAiErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }
}

export function isLocalAiError(value: unknown): value is LocalAiError {
  return value instanceof LocalAiError;
}
