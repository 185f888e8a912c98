const MiB = 1024 * 1024;

/**
 * The `stdio:` defaults, outside the zod schema (which uses them) so serve-stdio can start serving
 * with them before the config is parsed (a config that sets none of them parses to these).
 */
export const STDIO_DEFAULTS = {
  max_line_bytes: 8 * MiB,
  writer_queue_size: 1024,
  flush_timeout_ms: 2000,
  shutdown_grace_ms: 5000,
  // Two 60 Hz frames: a host gets at most ~30 text updates a second per stream; each line costs
  // the reader a wake-up that competes with generation for the CPU (docs/benchmarks.md).
  coalesce_ms: 33,
} as const;
