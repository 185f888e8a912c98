import type { ConfigState } from "../../config/read-config-file.js";
import { STDIO_DEFAULTS } from "../../config/stdio-defaults.js";
import type { StdioLimits } from "../../serving/stdio-limits.js";

/** serve-stdio's line, queue and shutdown limits (plus stdio.coalesce_ms for the chat method); the defaults when the config is missing, invalid or not parsed yet (null) (a broken config must never kill serve-stdio). */
export function stdioLimitsOf(configState: ConfigState | null): StdioLimits & { coalesceMs: number } {
  const stdio = configState?.status === "loaded" ? configState.config.stdio : STDIO_DEFAULTS;
  return {
    maxLineBytes: stdio.max_line_bytes,
    writerQueueSize: stdio.writer_queue_size,
    flushTimeoutMs: stdio.flush_timeout_ms,
    shutdownGraceMs: stdio.shutdown_grace_ms,
    maxInFlight: 256,
    coalesceMs: stdio.coalesce_ms,
  };
}
