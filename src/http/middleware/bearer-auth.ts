import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http-error.js";

const digest = (value: string): Buffer => createHash("sha256").update(value).digest();

/**
 * `Authorization: Bearer <token>` for /v1/*. Both sides are hashed first so the comparison is
 * constant-time over equal-length digests (timingSafeEqual needs equal lengths, and comparing
 * raw strings would leak the token's length).
 */
export function bearerAuth(token: string): MiddlewareHandler {
  const matches = bearerMatcher(token);
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (!matches(header)) {
      c.header("WWW-Authenticate", 'Bearer realm="local-ai"');
      throw new HttpError("unauthorized", /^Bearer\s+\S/i.test(header ?? "") ? "Incorrect bearer token" : "Missing bearer token: send Authorization: Bearer <token>");
    }
    await next();
  };
}

/** Whether an Authorization header carries exactly this token (constant-time). */
export function bearerMatcher(token: string): (header: string | undefined) => boolean {
  const expected = digest(token);
  return (header) => {
    const match = /^Bearer\s+(.+)$/i.exec(header ?? "");
    return match?.[1] !== undefined && timingSafeEqual(digest(match[1].trim()), expected);
  };
}
