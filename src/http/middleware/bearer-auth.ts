import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http-error.js";
import { setKeyName } from "../request-key.js";

const digest = (value: string): Buffer => createHash("sha256").update(value).digest();

/**
 * `Authorization: Bearer <token>` for /v1/*. Both sides are hashed first so the comparison is
 * constant-time over equal-length digests (timingSafeEqual needs equal lengths, and comparing
 * raw strings would leak the token's length). Anthropic clients send the same token as
 * `x-api-key` (Claude Code with ANTHROPIC_API_KEY, the Anthropic SDK): either header passes.
 */
export function bearerAuth(token: string): MiddlewareHandler {
  const matches = bearerMatcher(token);
  return async (c, next) => {
    const header = c.req.header("authorization");
    const apiKey = c.req.header("x-api-key");
    if (!matches(header) && !(apiKey !== undefined && matches(`Bearer ${apiKey}`))) {
      c.header("WWW-Authenticate", 'Bearer realm="local-ai"');
      const sent = /^Bearer\s+\S/i.test(header ?? "") || (apiKey ?? "").trim() !== "";
      throw new HttpError("unauthorized", sent ? "Incorrect bearer token" : "Missing bearer token: send Authorization: Bearer <token> (or x-api-key: <token>)");
    }
    // The single http.bearer_token is the key named "default" (docs/operations.md).
    setKeyName(c, "default");
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
