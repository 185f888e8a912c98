import type { RequestId } from "./messages.js";

/** A JSON object (not an array, not null): the only shape a request or its params may have. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A request id as the wire gave it (its JSON type kept), or null when it is not a string or finite number. */
export function readId(value: unknown): RequestId | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  return null;
}
