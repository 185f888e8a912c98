import { configOrDefaults } from "../../config/config-or-defaults.js";
import { createLogger, flushLogger } from "../../logging/create-logger.js";
import { downloadSettingsOf } from "../../models/download-settings.js";
import { PrivateModelPuller } from "../runtime/private-model-puller.js";
import type { PullResult, PullStep } from "../../models/pull-model.js";
import { toRuntimeError, type RuntimeError } from "../../shared/runtime-error.js";
import { routeConsole } from "../process/route-console.js";

export interface TerminalPullOptions {
  ref: string;
  force: boolean;
  /** --config; the defaults relative to `cwd` when there is no config file (configOrDefaults). */
  config?: string | undefined;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  onProgress: (downloadedBytes: number, totalBytes: number) => void;
  onStep: (step: PullStep) => void;
  /** What a library printed with console.* meanwhile (stdout is kept for the path alone). */
  onConsole: (text: string) => void;
  /** A second Ctrl-C: leave at once with this code. */
  exit: (code: number) => void;
}

export type TerminalPullOutcome = { ok: true; result: PullResult } | { ok: false; interrupted: boolean; failure: RuntimeError };

/** The shell's code for "ended by SIGINT". */
export const INTERRUPTED_EXIT = 130;

/**
 * `local-ai pull`: the model fetched after the fit check, with Ctrl-C stopping the download
 * cleanly (the partial file keeps what arrived; a second Ctrl-C exits at once). Quiet logs
 * (warn; LOCAL_AI_LOG_LEVEL=debug shows the details); never throws.
 */
export async function pullFromTerminal(options: TerminalPullOptions): Promise<TerminalPullOutcome> {
  const logger = createLogger({ level: "warn", env: options.env });
  const controller = new AbortController();
  const onInterrupt = (): void => {
    if (controller.signal.aborted) options.exit(INTERRUPTED_EXIT);
    controller.abort("interrupted (Ctrl-C)");
  };
  process.on("SIGINT", onInterrupt);
  // stdout is the path alone, even when node-llama-cpp prints (a Hugging Face rate-limit notice).
  const restoreConsole = routeConsole((level, text) => {
    if (level !== "debug") options.onConsole(text);
  });
  try {
    const { config } = await configOrDefaults(options.config, options);
    const settings = downloadSettingsOf(config, options.env);
    const puller = new PrivateModelPuller({ config, settings, logger }, { dataDir: config.app.data_dir, modelsDir: settings.modelsDir });
    const result = await puller.pull({
      ref: options.ref,
      force: options.force,
      signal: controller.signal,
      onProgress: (progress) => options.onProgress(progress.downloadedBytes, progress.totalBytes),
      onStep: options.onStep,
    });
    return { ok: true, result };
  } catch (error) {
    const failure = toRuntimeError(error);
    if (!controller.signal.aborted && failure.code === "internal_error") logger.error({ err: error }, "pull failed");
    return { ok: false, interrupted: controller.signal.aborted, failure };
  } finally {
    restoreConsole();
    process.off("SIGINT", onInterrupt);
    await flushLogger(logger);
  }
}
