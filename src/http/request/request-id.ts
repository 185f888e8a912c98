import { randomBytes } from "node:crypto";

/** What a client may send as its own `X-Request-Id`: short, and safe in a log line or a header. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id of a request: the client's `X-Request-Id` when it is safe (1-128 characters of
 * `A-Z a-z 0-9 . _ : -`), so a client's own tracing id carries through; anything else
 * (too long, spaces, control characters, a second value) is replaced by a generated one.
 */
export function requestIdFor(sent: string | undefined): string {
  if (sent !== undefined && SAFE_REQUEST_ID.test(sent)) return sent;
  return `req_${randomBytes(12).toString("hex")}`;
}
