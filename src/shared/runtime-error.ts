/**
 * The one error contract. Every front door maps `code` to its wire form in exactly one place
 * (stdio v1 error frames, JSON-RPC error codes, HTTP statuses).
 */
export const ERROR_CODES = [
  "config_missing",
  "config_invalid",
  "binary_missing",
  "model_missing",
  "model_plan_error",
  "model_too_large",
  "unknown_method",
  "invalid_request",
  "invalid_json",
  "invalid_params",
  "cancelled",
  "busy",
  "engine_unavailable",
  "engine_error",
  "engine_auth",
  "shutting_down",
  "context_overflow",
  "storage_full",
  "storage_error",
  "internal_error",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface RuntimeErrorOptions {
  /** Structured, wire-safe detail (for example the list of config problems). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class RuntimeError extends Error {
  override readonly name = "RuntimeError";
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: RuntimeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

export function isRuntimeError(value: unknown): value is RuntimeError {
  return value instanceof RuntimeError;
}

/**
 * Anything thrown becomes a RuntimeError. Unknown failures get a safe message: the original
 * (with its stack) belongs in the log, never on the wire.
 */
export function toRuntimeError(value: unknown): RuntimeError {
  if (value instanceof RuntimeError) return value;
  if (value instanceof Error && value.name === "AbortError") {
    return new RuntimeError("cancelled", "Request cancelled", { cause: value });
  }
  return new RuntimeError("internal_error", "Internal error", { cause: value });
}
