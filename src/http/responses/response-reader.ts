import type { Context } from "hono";
import { DEFAULT_KEY_NAME, NO_KEY_NAME } from "../keys/api-key.js";
import { requestKeyName } from "../request/request-key.js";

/** Who asks for a stored response: the request's key name, and whether it is the operator's. */
export interface ResponseReader {
  key: string;
  /** The bearer token, or a server without auth (one party): every response is visible to it. */
  operator: boolean;
}

/** The request's key as a reader of stored responses (docs/operations.md "Stored responses"). */
export function responseReader(c: Context): ResponseReader {
  const key = requestKeyName(c);
  return { key, operator: key === DEFAULT_KEY_NAME || key === NO_KEY_NAME };
}
