import type { ErrorShape } from "../responder/error-shape.js";

/** The Anthropic error body: `{"type": "error", "error": {"type", "message"}}`. */
export interface AnthropicErrorBody {
  type: "error";
  error: { type: AnthropicErrorType; message: string };
}

export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

/** The API's error type for an HTTP status (the status itself stays what the server's error contract gives). */
export function anthropicErrorType(status: number): AnthropicErrorType {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 503 || status === 529) return "overloaded_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

/**
 * An error in the Anthropic shape. The message names the field (`messages.3.content.1.type: ...`),
 * as the API does: where the failure carries a field that its message does not start with, the
 * field is put in front.
 */
export function anthropicError(status: number, message: string, param: string | null): AnthropicErrorBody {
  const named = param !== null && param !== "" && !message.startsWith(param) ? `${param}: ${message}` : message;
  return { type: "error", error: { type: anthropicErrorType(status), message: named } };
}

/** The Messages dialect's error shape: Anthropic's body, with `error.request_id` (the id a user quotes). */
export const anthropicErrorShape: ErrorShape = (mapped, requestId) => {
  const body = anthropicError(mapped.status, mapped.body.error.message, mapped.body.error.param);
  return { ...body, error: { ...body.error, ...(requestId === undefined ? {} : { request_id: requestId }) } };
};
