import { Writable } from "node:stream";
import { pino, type Logger } from "pino";

export interface CapturedLogger {
  logger: Logger;
  records: () => Array<Record<string, unknown>>;
}

/** A real pino logger writing JSON into memory, so tests can assert what was logged. */
export function captureLogger(level: "debug" | "info" | "trace" = "debug"): CapturedLogger {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString("utf8").split("\n").filter((line) => line !== ""));
      callback();
    },
  });
  return {
    logger: pino({ level }, sink),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
