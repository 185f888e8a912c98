import { RuntimeError, type ErrorCode } from "../../shared/runtime-error.js";
import type { RequestId } from "../messages.js";
import { toV1Code } from "../v1/error-frame.js";

export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_METHOD_NOT_FOUND = -32601;
export const JSONRPC_INVALID_PARAMS = -32602;
export const JSONRPC_INTERNAL_ERROR = -32603;

/**
 * The one place RuntimeError codes become JSON-RPC error codes. The five standard codes keep the
 * spec's meaning; every domain error has its own number in the server range -32000..-32099 and
 * carries the v1 code name in `data.code`. `Record<ErrorCode, ...>` makes a new code a compile
 * error here until it has a number.
 */
const CODE_NUMBERS: Record<ErrorCode, number> = {
  invalid_json: JSONRPC_PARSE_ERROR,
  unknown_method: JSONRPC_METHOD_NOT_FOUND,
  invalid_params: JSONRPC_INVALID_PARAMS,
  internal_error: JSONRPC_INTERNAL_ERROR,
  invalid_request: -32000,
  config_missing: -32001,
  config_invalid: -32002,
  binary_missing: -32003,
  model_missing: -32004,
  model_plan_error: -32005,
  cancelled: -32006,
  busy: -32007,
  engine_unavailable: -32008,
  engine_error: -32009,
  engine_auth: -32010,
  shutting_down: -32011,
  context_overflow: -32012,
  storage_full: -32013,
  storage_error: -32014,
  model_too_large: -32015,
};

export function jsonRpcCodeOf(code: ErrorCode): number {
  return CODE_NUMBERS[code];
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

export function jsonRpcError(id: RequestId | null, code: number, message: string, data?: Record<string, unknown>): object {
  const error: JsonRpcErrorObject = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: "2.0", id, error };
}

/** The class name of what a handler threw (seed 003: -32603 names the exception in data.exception). */
export function exceptionName(thrown: unknown): string {
  const origin = thrown instanceof RuntimeError && thrown.cause !== undefined ? thrown.cause : thrown;
  if (origin instanceof Error) return origin.constructor.name || origin.name;
  return origin === null ? "null" : typeof origin;
}

/** A RuntimeError as a JSON-RPC error response; `data.code` is the v1 name, details are spread beside it. */
export function jsonRpcErrorFrame(id: RequestId | null, error: RuntimeError, thrown: unknown): object {
  const data: Record<string, unknown> = { code: toV1Code(error) };
  if (error.details !== undefined) for (const [key, value] of Object.entries(error.details)) if (key !== "code") data[key] = value;
  if (error.code === "internal_error") data.exception = exceptionName(thrown);
  return jsonRpcError(id, jsonRpcCodeOf(error.code), error.message, data);
}
