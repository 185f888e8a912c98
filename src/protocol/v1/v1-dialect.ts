import type { StdioDialect } from "../dialect.js";
import { parseEnvelope } from "./envelope.js";
import { errorFrame } from "./error-frame.js";

/** Seed 000: `{id, method, params}` in; `{id, type: result|error|event, ...}` out. */
export const v1Dialect: StdioDialect = {
  name: "v1",
  parseLine(text) {
    const envelope = parseEnvelope(text);
    if (envelope.kind === "invalid") {
      return { batch: false, item: { kind: "reject", reason: envelope.message, frame: { id: envelope.id, type: "error", code: envelope.code, message: envelope.message } } };
    }
    const { request } = envelope;
    return { batch: false, item: { kind: "call", id: request.id, method: request.method, params: request.params, notification: false } };
  },
  overflowFrame: (bytes, max) => ({ id: null, type: "error", code: "invalid_request", message: `Request line of ${bytes} bytes exceeds the limit of ${max} bytes; it was discarded` }),
  invalidRequestFrame: (id, message) => ({ id, type: "error", code: "invalid_request", message }),
  resultFrame: (id, result) => ({ id, type: "result", result: result ?? null }),
  errorFrame: (id, error) => errorFrame(id, error),
  eventFrame(id, event, fields) {
    // Seed order: id, type, event, then the event's own fields (which never replace those three).
    const message: Record<string, unknown> = { id, type: "event", event };
    for (const [key, value] of Object.entries(fields)) if (!(key in message)) message[key] = value;
    return message;
  },
};
