import type { ContentfulStatusCode } from "hono/utils/http-status";
import { toRuntimeError, type ErrorCode } from "../shared/runtime-error.js";

/** Failures only the HTTP front door has (no RuntimeError code fits them). */
export type HttpOnlyCode =
  | "unauthorized"
  | "permission_denied"
  | "rate_limit_exceeded"
  | "concurrency_limit_exceeded"
  | "not_found"
  | "model_not_found"
  | "payload_too_large"
  | "host_not_allowed"
  | "origin_not_allowed"
  | "unsupported_media_type"
  | "session_busy"
  | "unsupported_parameter"
  | "embeddings_not_supported"
  | "rerank_not_supported"
  | "tokenize_not_supported"
  | "completions_not_supported"
  | "context_length_exceeded";

export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly code: HttpOnlyCode,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

export interface MappedError {
  status: ContentfulStatusCode;
  body: OpenAiErrorBody;
}

const HTTP_ONLY: Record<HttpOnlyCode, [ContentfulStatusCode, string]> = {
  unauthorized: [401, "authentication_error"],
  // An API key's scope (docs/operations.md "Keys"); Anthropic's shape takes its type from the status.
  permission_denied: [403, "permission_error"],
  // OpenAI's own body for a request-rate limit: type "requests", code rate_limit_exceeded.
  rate_limit_exceeded: [429, "requests"],
  concurrency_limit_exceeded: [429, "requests"],
  not_found: [404, "invalid_request_error"],
  model_not_found: [404, "invalid_request_error"],
  payload_too_large: [413, "invalid_request_error"],
  host_not_allowed: [403, "invalid_request_error"],
  origin_not_allowed: [403, "invalid_request_error"],
  unsupported_media_type: [415, "invalid_request_error"],
  session_busy: [409, "invalid_request_error"],
  unsupported_parameter: [400, "invalid_request_error"],
  embeddings_not_supported: [400, "invalid_request_error"],
  rerank_not_supported: [400, "invalid_request_error"],
  tokenize_not_supported: [400, "invalid_request_error"],
  completions_not_supported: [400, "invalid_request_error"],
  context_length_exceeded: [400, "invalid_request_error"],
};

/** Exhaustive (a Record over ErrorCode): a new RuntimeError code is a compile error until it has a status. */
const RUNTIME: Record<ErrorCode, [ContentfulStatusCode, string]> = {
  invalid_json: [400, "invalid_request_error"],
  invalid_request: [400, "invalid_request_error"],
  invalid_params: [400, "invalid_request_error"],
  context_overflow: [400, "invalid_request_error"],
  unknown_method: [404, "invalid_request_error"],
  busy: [409, "invalid_request_error"],
  cancelled: [503, "server_error"],
  shutting_down: [503, "server_error"],
  engine_unavailable: [503, "server_error"],
  model_missing: [503, "server_error"],
  binary_missing: [503, "server_error"],
  engine_error: [502, "server_error"],
  engine_auth: [502, "server_error"],
  config_missing: [500, "server_error"],
  config_invalid: [500, "server_error"],
  model_plan_error: [500, "server_error"],
  model_too_large: [507, "server_error"],
  storage_full: [507, "server_error"],
  storage_error: [500, "server_error"],
  internal_error: [500, "server_error"],
};

/**
 * The one place errors become HTTP statuses and OpenAI-style bodies. Unknown failures become
 * `internal_error` with a fixed message: stacks and causes go to the log, never on the wire.
 */
export function toOpenAiError(error: unknown): MappedError {
  if (error instanceof HttpError) {
    const [status, type] = HTTP_ONLY[error.code];
    return { status, body: { error: { message: error.message, type, param: error.param, code: error.code } } };
  }
  const runtime = toRuntimeError(error);
  const [status, type] = RUNTIME[runtime.code];
  const param = typeof runtime.details?.param === "string" ? runtime.details.param : null;
  // An engine may name a more precise 400 code (e.g. `unsupported_parameter` for a field its model
  // cannot honour) without importing the HTTP layer; the status still comes from its RuntimeError code.
  const precise = runtime.details?.openai_code;
  const code = status === 400 && typeof precise === "string" && precise in HTTP_ONLY ? precise : runtime.code;
  return { status, body: { error: { message: runtime.message, type, param, code } } };
}
