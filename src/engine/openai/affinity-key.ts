import { createHash } from "node:crypto";

/**
 * What the upstream is told of a conversation's cache key: a digest (32 hex digits), the same
 * for every request of the conversation, that never carries a user or session id in clear and
 * is always a valid header value.
 */
export function affinityKey(cacheKey: string): string {
  return createHash("sha256").update(cacheKey).digest("hex").slice(0, 32);
}
