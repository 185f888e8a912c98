/** A log record of the child (pino JSON on its stderr), with the level as a name. */
export interface LogRecord {
  level: LogLevel;
  msg: string;
  time?: number;
  [field: string]: unknown;
}

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal";

/** Where the client's own diagnostics and the child's log records go: pino, console, or anything alike. */
export interface ClientLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

const LEVELS: Record<number, LogLevel> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

/** A stderr line as a log record, or null when it is not one (a crash trace, a warning of Node's). */
export function parseLogRecord(line: string): LogRecord | null {
  if (!line.startsWith("{")) return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const { level, msg, ...rest } = value as Record<string, unknown>;
  const name = typeof level === "number" ? LEVELS[level] : undefined;
  if (name === undefined || typeof msg !== "string") return null;
  return { ...rest, level: name, msg };
}

/** The logger method for a level (the interface has four). */
export function logAt(logger: ClientLogger, level: LogLevel): ClientLogger["info"] {
  switch (level) {
    case "trace":
    case "debug":
      return logger.debug.bind(logger);
    case "info":
      return logger.info.bind(logger);
    case "warn":
      return logger.warn.bind(logger);
    case "error":
    case "fatal":
      return logger.error.bind(logger);
  }
}
