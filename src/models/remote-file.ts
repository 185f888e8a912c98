import { setTimeout as sleep } from "node:timers/promises";
import type { GgufByteSource } from "../engine/gguf/gguf-bounds.js";
import { RuntimeError } from "../shared/runtime-error.js";
import { guardedFetch, type GuardedResponse } from "./guarded-fetch.js";
import type { HubAccess } from "./hub-access.js";

/**
 * One remote file read by ranges, for its GGUF header: the first read follows the redirects
 * (guardedFetch) and later reads go to the URL it ended at, with the token only if that request
 * carried it. A read takes at most the bytes asked for and cancels the rest, so a server that
 * ignores the Range header and streams a huge body costs no more than the range.
 */
export class RemoteFile implements GgufByteSource {
  /** The URL the redirects ended at (after the first read). */
  finalUrl: string;
  /** Whether requests to finalUrl carry the token. */
  authorized = true;
  /** The size the server gives (Content-Range's total, or Content-Length of a whole-file answer). */
  advertisedBytes: number | undefined;
  private resolved = false;

  constructor(
    readonly url: string,
    private readonly access: HubAccess,
    private readonly signal?: AbortSignal,
  ) {
    this.finalUrl = url;
  }

  async read(offset: number, length: number): Promise<Buffer> {
    const { response, url, authorized } = await this.fetchRange(offset, length);
    if (!this.resolved) {
      this.finalUrl = url;
      this.authorized = authorized;
      this.resolved = true;
    }
    if (response.status === 416) {
      await response.body?.cancel().catch(() => undefined);
      return Buffer.alloc(0);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new RuntimeError("model_missing", `Cannot read ${this.url}: ${response.status} ${response.statusText}${statusHint(response.status)}`, {
        details: { ref: this.url, reason: "unreachable", status: response.status },
      });
    }
    const total = response.headers.get("content-range")?.split("/")[1];
    if (response.status === 206 && total !== undefined && /^\d+$/.test(total)) this.advertisedBytes = Number(total);
    else if (response.status === 200) {
      const whole = Number(response.headers.get("content-length") ?? Number.NaN);
      if (Number.isSafeInteger(whole)) this.advertisedBytes = whole;
      if (offset > 0) {
        await response.body?.cancel().catch(() => undefined);
        throw new RuntimeError("model_missing", `Cannot read ${this.url}: the server ignores ranged requests (Range), which reading a model's header needs`, {
          details: { ref: this.url, reason: "unreachable" },
        });
      }
    }
    return readAtMost(response, length);
  }

  private async fetchRange(offset: number, length: number): Promise<GuardedResponse> {
    for (let attempt = 0; ; attempt += 1) {
      const delay = RETRY_DELAYS_MS[attempt];
      try {
        const result = await guardedFetch(this.finalUrl, this.access, {
          headers: { Range: `bytes=${offset}-${offset + length - 1}`, Accept: "*/*" },
          authorized: this.authorized,
          ...(this.signal ? { signal: this.signal } : {}),
        });
        const busy = result.response.status >= 500 || result.response.status === 429;
        if (!busy || delay === undefined) return result;
        await result.response.body?.cancel().catch(() => undefined);
      } catch (error) {
        // A refused redirect (RuntimeError) or a cancel is final; a network failure is tried again.
        if (error instanceof RuntimeError || this.signal?.aborted === true || delay === undefined) throw error;
      }
      await sleep(delay, undefined, this.signal ? { signal: this.signal } : {});
    }
  }
}

/** A request that failed for the network or the server's load is tried again a little (not a 4xx). */
const RETRY_DELAYS_MS = [500, 1500];

/** The body's first `length` bytes; the rest is cancelled, never read. */
async function readAtMost(response: Response, length: number): Promise<Buffer> {
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    while (size < length) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks, size).subarray(0, Math.min(size, length));
}

function statusHint(status: number): string {
  if (status === 404) return " (no file at this URL: check the name; `hf:owner/repo` without a quantization picks Q4_K_M)";
  if (status === 401 || status === 403) return " (a gated or private repository: set HF_TOKEN to a token that may read it)";
  return "";
}
