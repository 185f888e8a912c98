import type { ErrorMessage, RequestId, V1ErrorCode } from "../messages.js";
import type { RuntimeError } from "../../shared/runtime-error.js";

/** The one place where RuntimeError codes become v1 wire codes. */
export function toV1Code(error: RuntimeError): V1ErrorCode {
  switch (error.code) {
    case "invalid_params":
      return "invalid_request";
    default:
      return error.code;
  }
}

export function errorFrame(id: RequestId | null, error: RuntimeError): ErrorMessage {
  const frame: ErrorMessage = { id, type: "error", code: toV1Code(error), message: error.message };
  if (error.details !== undefined) frame.details = error.details;
  return frame;
}
