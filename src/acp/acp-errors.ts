import { RequestError } from "@agentclientprotocol/sdk";
import { toRuntimeError, type ErrorCode } from "../shared/runtime-error.js";

/**
 * RuntimeError codes -> ACP's JSON-RPC errors, in one place. ACP reserves the server-error range
 * for its own meanings (-32000 authentication required, -32002 resource not found), so domain
 * errors use the standard codes, with our code and details in `data` and the exact message.
 */
export function toRequestError(thrown: unknown): RequestError {
  if (thrown instanceof RequestError) return thrown;
  const error = toRuntimeError(thrown);
  const data = { code: error.code, ...(error.details === undefined ? {} : { details: error.details }) };
  return new RequestError(numberFor(error.code), error.message, data);
}

function numberFor(code: ErrorCode): number {
  switch (code) {
    case "invalid_params":
    case "context_overflow":
      return -32602;
    case "invalid_request":
    case "invalid_json":
    case "busy":
      return -32600;
    case "unknown_method":
      return -32601;
    case "cancelled":
      return -32800;
    case "config_missing":
    case "config_invalid":
    case "binary_missing":
    case "model_missing":
    case "model_plan_error":
    case "model_too_large":
    case "engine_unavailable":
    case "engine_error":
    case "engine_auth":
    case "shutting_down":
    case "storage_full":
    case "storage_error":
    case "internal_error":
      return -32603;
    default: {
      const unreachable: never = code;
      throw new Error(`unmapped error code ${String(unreachable)}`);
    }
  }
}
