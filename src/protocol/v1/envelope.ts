import { isPlainObject, readId } from "../json-shape.js";
import type { Request, RequestId } from "../messages.js";

export type Envelope =
  | { kind: "request"; request: Request }
  | { kind: "invalid"; id: RequestId | null; code: "invalid_json" | "invalid_request"; message: string };


/** Parses one NDJSON line into a v1 request, or says precisely why it is not one. */
export function parseEnvelope(line: string): Envelope {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { kind: "invalid", id: null, code: "invalid_json", message: `Line is not valid JSON: ${(error as Error).message}` };
  }
  if (!isPlainObject(value)) {
    const what = Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`;
    return { kind: "invalid", id: null, code: "invalid_request", message: `A request must be a JSON object, got ${what}` };
  }
  const id = readId(value.id);
  if (id === null) {
    const message = value.id === undefined ? 'Missing "id" (string or number)' : '"id" must be a string or a number';
    return { kind: "invalid", id: null, code: "invalid_request", message };
  }
  if (typeof value.method !== "string" || value.method === "") {
    return { kind: "invalid", id, code: "invalid_request", message: '"method" must be a non-empty string' };
  }
  if (value.params !== undefined && !isPlainObject(value.params)) {
    return { kind: "invalid", id, code: "invalid_request", message: '"params" must be a JSON object when present' };
  }
  return { kind: "request", request: { id, method: value.method, params: value.params ?? {} } };
}
