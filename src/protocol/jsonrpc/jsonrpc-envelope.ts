import type { Inbound, ParsedLine } from "../dialect.js";
import { isPlainObject, readId } from "../json-shape.js";
import type { RequestId } from "../messages.js";
import { JSONRPC_PARSE_ERROR, JSONRPC_INVALID_REQUEST, jsonRpcError } from "./jsonrpc-frames.js";


function reject(id: RequestId | null, message: string): Inbound {
  return { kind: "reject", reason: message, frame: jsonRpcError(id, JSONRPC_INVALID_REQUEST, `Invalid Request: ${message}`, { code: "invalid_request" }) };
}

/**
 * One batch entry or single message. A request has `"jsonrpc": "2.0"`, a non-empty string
 * `method`, an optional structured `params` and, unless it is a notification, an `id` that is a
 * string, a number or null. A message without `id` that is not even a valid request is still
 * answered: the server cannot tell it was meant as a notification (spec 5).
 */
export function parseJsonRpcMessage(value: unknown): Inbound {
  if (!isPlainObject(value)) {
    const what = Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`;
    return reject(null, `a request must be a JSON object, got ${what}`);
  }
  const hasId = Object.hasOwn(value, "id");
  const id = readId(value.id);
  if (hasId && value.id !== null && id === null) return reject(null, '"id" must be a string, a number or null');
  if (value.jsonrpc !== "2.0") return reject(id, '"jsonrpc" must be exactly "2.0"');
  if (typeof value.method !== "string" || value.method === "") return reject(id, '"method" must be a non-empty string');
  if (value.params !== undefined && typeof value.params !== "object") return reject(id, '"params" must be an object or an array when present');
  if (value.params === null) return reject(id, '"params" must be an object or an array when present');
  return { kind: "call", id, method: value.method, params: value.params ?? {}, notification: !hasId };
}

/**
 * Seed 003 framing: a line is one request, one notification, or a batch (an array of them).
 * A line that is not JSON is -32700 with id null; an empty batch is one -32600 (not an array).
 */
export function parseJsonRpcLine(text: string, maxBatch: number): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = `Parse error: ${(error as Error).message}`;
    return { batch: false, item: { kind: "reject", reason: message, frame: jsonRpcError(null, JSONRPC_PARSE_ERROR, message, { code: "invalid_json" }) } };
  }
  if (!Array.isArray(value)) return { batch: false, item: parseJsonRpcMessage(value) };
  if (value.length === 0) return { batch: false, item: reject(null, "an empty batch") };
  if (value.length > maxBatch) return { batch: false, item: reject(null, `a batch of ${value.length} entries exceeds the limit of ${maxBatch}`) };
  return { batch: true, items: value.map(parseJsonRpcMessage) };
}
