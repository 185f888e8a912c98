import type { StdioDialect } from "../dialect.js";
import { parseJsonRpcLine } from "./jsonrpc-envelope.js";
import { JSONRPC_INVALID_REQUEST, jsonRpcError, jsonRpcErrorFrame } from "./jsonrpc-frames.js";

/** The notification that carries a request's streamed events (seed 003's progress pattern). */
export const EVENT_NOTIFICATION = "$/event";

/**
 * Seed 003, JSON-RPC 2.0 over newline-delimited stdio: `jsonrpc: "2.0"` on every message,
 * notifications never answered, batches answered as one array, events as `$/event` notifications
 * `{request_id, event, ...fields}` sent before the request's response.
 */
export function jsonRpcDialect(maxBatch: number): StdioDialect {
  return {
    name: "jsonrpc",
    parseLine: (text) => parseJsonRpcLine(text, maxBatch),
    overflowFrame: (bytes, max) =>
      jsonRpcError(null, JSONRPC_INVALID_REQUEST, `Invalid Request: a line of ${bytes} bytes exceeds the limit of ${max} bytes; it was discarded`, {
        code: "invalid_request",
        max_line_bytes: max,
      }),
    invalidRequestFrame: (id, message) => jsonRpcError(id, JSONRPC_INVALID_REQUEST, `Invalid Request: ${message}`, { code: "invalid_request" }),
    resultFrame: (id, result) => ({ jsonrpc: "2.0", id, result: result ?? null }),
    errorFrame: jsonRpcErrorFrame,
    eventFrame(id, event, fields) {
      const params: Record<string, unknown> = { request_id: id, event };
      for (const [key, value] of Object.entries(fields)) if (!(key in params)) params[key] = value;
      return { jsonrpc: "2.0", method: EVENT_NOTIFICATION, params };
    },
  };
}
