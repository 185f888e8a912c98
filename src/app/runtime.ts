import type { Logger } from "pino";
import type { ConfigState } from "../config/load-config.js";
import { stdioSchema } from "../config/schema.js";
import type { DoctorReport } from "../diagnostics/doctor-report.js";
import { runDoctor } from "../diagnostics/run-doctor.js";
import type { StdioLimits } from "../protocol/stdio-server.js";
import type { PackageInfo } from "../shared/version.js";

export interface RuntimeOptions {
  configState: ConfigState;
  logger: Logger;
  info: PackageInfo;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The composition root: everything a front door needs, built once from the config and handed
 * down. No module keeps state of its own. Engines, tools and sessions join here in later issues.
 */
export interface Runtime {
  readonly info: PackageInfo;
  readonly configState: ConfigState;
  readonly logger: Logger;
  runDoctor(signal?: AbortSignal): Promise<DoctorReport>;
  stdioLimits(): StdioLimits;
  close(): Promise<void>;
}

export function createRuntime(options: RuntimeOptions): Runtime {
  const { configState, logger, info, env } = options;
  if (configState.status === "missing") {
    logger.warn({ path: configState.path }, "no config file; methods that need one will answer config_missing");
  } else if (configState.status === "invalid") {
    logger.warn({ path: configState.path, problems: configState.problems }, "config is invalid; methods that need it will answer config_invalid");
  }
  // Stdio limits work without a valid config: a broken config must never kill serve-stdio.
  const stdio = configState.status === "loaded" ? configState.config.stdio : stdioSchema.parse({});
  return {
    info,
    configState,
    logger,
    runDoctor: (signal) => runDoctor({ configState, version: info.version, env, ...(signal ? { signal } : {}) }),
    stdioLimits: () => ({
      maxLineBytes: stdio.max_line_bytes,
      writerQueueSize: stdio.writer_queue_size,
      flushTimeoutMs: stdio.flush_timeout_ms,
      shutdownGraceMs: stdio.shutdown_grace_ms,
      maxInFlight: 256,
    }),
    close: async () => undefined,
  };
}
