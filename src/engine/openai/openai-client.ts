// Builds the official OpenAI client the way every engine here needs it: no SDK retries (the
// supervisor owns retry policy), an explicit timeout, and the SDK's own logging routed into pino
// (its default is console: unstructured lines that bypass our levels and redaction).
import OpenAI from "openai";
import type { Logger } from "../../logging/create-logger.js";

/**
 * Bound on reaching the server and receiving the response headers (the SDK clears it once the
 * body starts). Long enough for a CPU server processing a big prompt; undici's own header
 * timeout is the same 5 minutes.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

export interface OpenAiClientOptions {
  baseUrl: string;
  /** Local servers usually ignore it, but the SDK requires a value. */
  apiKey?: string | null;
  logger: Logger;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

type SdkLogFn = (message: string, ...rest: unknown[]) => void;

/** The SDK calls `logger.warn(message, ...details)`; pino wants `(object, message)`. */
function sdkLogger(logger: Logger): { error: SdkLogFn; warn: SdkLogFn; info: SdkLogFn; debug: SdkLogFn } {
  const child = logger.child({ component: "openai-sdk" });
  const wrap =
    (level: "error" | "warn" | "info" | "debug"): SdkLogFn =>
    (message, ...rest) => {
      child[level](rest.length > 0 ? { details: rest } : {}, message);
    };
  return { error: wrap("error"), warn: wrap("warn"), info: wrap("info"), debug: wrap("debug") };
}

export function createOpenAiClient(options: OpenAiClientOptions): OpenAI {
  return new OpenAI({
    baseURL: options.baseUrl,
    apiKey: options.apiKey ?? "not-needed",
    maxRetries: 0,
    timeout: options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    logger: sdkLogger(options.logger),
    // The SDK's info/debug lines describe every request; ours already do that.
    logLevel: "warn",
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
  });
}
