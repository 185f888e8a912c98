import type { ConfigState } from "../config/load-config.js";
import { stdioSchema } from "../config/schema.js";
import type { StdioLimits } from "../protocol/stdio-server.js";

/** serve-stdio's line, queue and shutdown limits; the defaults when the config is missing or invalid (a broken config must never kill serve-stdio). */
export function stdioLimitsOf(configState: ConfigState): StdioLimits {
  const stdio = configState.status === "loaded" ? configState.config.stdio : stdioSchema.parse({});
  return {
    maxLineBytes: stdio.max_line_bytes,
    writerQueueSize: stdio.writer_queue_size,
    flushTimeoutMs: stdio.flush_timeout_ms,
    shutdownGraceMs: stdio.shutdown_grace_ms,
    maxInFlight: 256,
  };
}
