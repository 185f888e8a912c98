import { createHash, timingSafeEqual } from "node:crypto";
import type { ApiKey } from "./api-key.js";

/** The two primitives of a token check, injectable so a test can see the work done. */
export interface TokenCompare {
  digest(value: string): Buffer;
  equal(a: Buffer, b: Buffer): boolean;
}

export const SHA256_COMPARE: TokenCompare = {
  digest: (value) => createHash("sha256").update(value).digest(),
  equal: (a, b) => timingSafeEqual(a, b),
};

/**
 * The configured keys, looked up by a presented token in constant time: the token is hashed
 * (so every comparison is over 32 bytes whatever its length) and compared with every key's
 * digest, without stopping at a match, so the time says nothing about which bytes, which key, or
 * whether any key matched.
 */
export class KeyRing {
  private readonly entries: Array<{ key: ApiKey; digest: Buffer }>;

  constructor(
    keys: readonly ApiKey[],
    private readonly compare: TokenCompare = SHA256_COMPARE,
  ) {
    this.entries = keys.map((key) => ({ key, digest: compare.digest(key.token) }));
  }

  get size(): number {
    return this.entries.length;
  }

  find(token: string): ApiKey | null {
    const presented = this.compare.digest(token);
    let found: ApiKey | null = null;
    for (const entry of this.entries) {
      // Compare first, always: `found === null` must not short-circuit a comparison.
      const equal = this.compare.equal(presented, entry.digest);
      if (equal && found === null) found = entry.key;
    }
    return found;
  }

  /** The key of an `Authorization: Bearer <token>` header, if any. */
  fromAuthorization(header: string | undefined): ApiKey | null {
    const token = bearerToken(header);
    return token === null ? null : this.find(token);
  }

  /**
   * The key a request presents, in a fixed precedence: a Bearer token decides alone (a wrong one
   * is no key whatever `x-api-key` says, so two credentials never widen each other); `x-api-key`
   * counts only without one. Claude Code sends both when a user's global ANTHROPIC_API_KEY rides
   * along with the token meant for this server: the Bearer is the one meant.
   */
  fromHeaders(authorization: string | undefined, apiKey: string | undefined): ApiKey | null {
    const token = bearerToken(authorization);
    if (token !== null) return this.find(token);
    const key = apiKey?.trim() ?? "";
    return key === "" ? null : this.find(key);
  }
}

/** The token of an `Authorization: Bearer <token>` header; null when there is none. */
export function bearerToken(header: string | undefined): string | null {
  const token = /^Bearer\s+(.+)$/i.exec(header ?? "")?.[1]?.trim();
  return token === undefined || token === "" ? null : token;
}
