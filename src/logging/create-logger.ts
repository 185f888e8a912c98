import { createRequire } from "node:module";
import { pino, type DestinationStream, type Logger } from "pino";
import { LOG_LEVELS, type LogLevel } from "../config/log-levels.js";

export type { Logger } from "pino";

export interface LoggerOptions {
  level?: LogLevel | undefined;
  /** Human-readable lines instead of JSON; defaults to stderr being a TTY. */
  pretty?: boolean;
  /** Injected in tests; defaults to fd 2. Logs never go to stdout (it carries the protocol). */
  destination?: DestinationStream;
  env?: Readonly<Record<string, string | undefined>>;
}

const REDACT = ["api_key", "bearer_token", "token", "*.api_key", "*.bearer_token", "*.token", "headers.authorization", "*.headers.authorization", 'headers["x-api-key"]', '*.headers["x-api-key"]'];

/** `LOCAL_AI_LOG_LEVEL` wins over the config so a user can turn on debug without editing it. */
export function resolveLogLevel(configured: LogLevel | undefined, env: Readonly<Record<string, string | undefined>>): LogLevel {
  const fromEnv = env.LOCAL_AI_LOG_LEVEL?.toLowerCase();
  if (fromEnv !== undefined && (LOG_LEVELS as readonly string[]).includes(fromEnv)) return fromEnv as LogLevel;
  return configured ?? "info";
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const env = options.env ?? process.env;
  const level = resolveLogLevel(options.level, env);
  const base = { level, redact: { paths: REDACT, censor: "[redacted]" }, base: { pid: process.pid } };
  if (options.destination !== undefined) return pino(base, options.destination);
  const usePretty = options.pretty ?? (process.stderr.isTTY === true);
  if (usePretty) {
    // Loaded only on a TTY (hosts and scripts pipe stderr): it costs tens of ms at start. It is
    // CommonJS, so a synchronous require keeps createLogger synchronous.
    const pretty = createRequire(import.meta.url)("pino-pretty") as typeof import("pino-pretty");
    // NO_COLOR (https://no-color.org): plain log lines on a terminal too.
    const colorize = env.NO_COLOR === undefined || env.NO_COLOR === "";
    return pino(base, pretty({ destination: 2, sync: true, colorize, ignore: "pid,hostname", translateTime: "HH:MM:ss.l" }));
  }
  // Async, bounded: a host that stops reading stderr must not stall the loop or grow memory unboundedly.
  return pino(base, pino.destination({ fd: 2, sync: false, maxLength: 16 * 1024 * 1024 }));
}

/** Waits (bounded) until buffered log lines reach fd 2; used right before the process exits. */
export function flushLogger(logger: Logger, timeoutMs = 1000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    timer.unref();
    try {
      logger.flush(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}
