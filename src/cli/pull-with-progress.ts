import { routeConsole } from "../app/route-console.js";
import { describeFacts } from "../diagnostics/checks/model-insights.js";
import { createLogger, flushLogger } from "../logging/create-logger.js";
import { downloadSettingsOf } from "../models/download-settings.js";
import { ModelPuller } from "../models/model-puller.js";
import type { PullStep } from "../models/pull-model.js";
import { formatBytes } from "../shared/format-bytes.js";
import { toRuntimeError, type RuntimeError } from "../shared/runtime-error.js";
import { configOrDefaults } from "./cli-config.js";
import type { CliDeps } from "./cli-deps.js";
import { DownloadProgress } from "./download-progress.js";

export interface PullWithProgressOptions {
  ref: string;
  /** The config whose app.models_dir receives the model (default: $LOCAL_AI_CONFIG, ./config.yaml). */
  configPath?: string | undefined;
  /** Download even when the fit check refuses. */
  force: boolean;
}

export type PullRunOutcome =
  | { status: "done"; path: string; bytes: number; downloaded: boolean }
  | { status: "interrupted"; partial?: string | undefined }
  | { status: "failed"; error: RuntimeError };

/**
 * A pull as the terminal shows it, shared by `pull` and `init --pull`: the steps and a progress
 * bar (plain lines when stderr is not a terminal) on stderr, Ctrl-C stopping the download cleanly
 * (the partial file keeps what arrived; a second Ctrl-C exits at once). stdout is left to the
 * caller.
 */
export async function pullWithProgress(options: PullWithProgressOptions, deps: CliDeps): Promise<PullRunOutcome> {
  // Quiet by default: the steps are the output; LOCAL_AI_LOG_LEVEL=debug shows the details.
  const logger = createLogger({ level: "warn", env: deps.env });
  const controller = new AbortController();
  const onInterrupt = (): void => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort("interrupted (Ctrl-C)");
  };
  process.on("SIGINT", onInterrupt);
  const bar = new DownloadProgress(deps.stderr, { tty: deps.stderrIsTTY === true, columns: (deps.stderr as { columns?: number }).columns ?? 80 });
  const say = (line: string): void => {
    bar.end();
    deps.stderr.write(`${line}\n`);
  };
  // Whatever node-llama-cpp prints (a Hugging Face rate-limit notice) goes to stderr.
  const restoreConsole = routeConsole((level, text) => {
    if (level !== "debug") say(text);
  });
  try {
    const { config } = await configOrDefaults(options.configPath, deps);
    const settings = downloadSettingsOf(config, deps.env);
    const puller = new ModelPuller({ config, settings, logger });
    const result = await puller.pull({
      ref: options.ref,
      force: options.force,
      signal: controller.signal,
      onProgress: (progress) => bar.update(progress.downloadedBytes, progress.totalBytes),
      onStep: (step) => say(describeStep(step)),
    });
    bar.end();
    return { status: "done", path: result.path, bytes: result.bytes, downloaded: result.downloaded };
  } catch (error) {
    bar.end();
    const failure = toRuntimeError(error);
    if (controller.signal.aborted) {
      return { status: "interrupted", partial: typeof failure.details?.partial === "string" ? failure.details.partial : undefined };
    }
    if (failure.code === "internal_error") logger.error({ err: error }, "pull failed");
    return { status: "failed", error: failure };
  } finally {
    restoreConsole();
    process.off("SIGINT", onInterrupt);
    await flushLogger(logger);
  }
}

/** The message a user reads for an interrupted pull, naming the command that resumes it. */
export function interruptedMessage(ref: string, partial: string | undefined): string {
  return `Interrupted. The partial download is kept${partial === undefined ? "" : ` (${partial})`}; run \`local-ai pull ${ref}\` again to resume it.`;
}

function describeStep(step: PullStep): string {
  switch (step.step) {
    case "found":
      return `Already downloaded: ${step.path} (${formatBytes(step.bytes)})`;
    case "replacing":
      return `${step.message}; downloading it again`;
    case "checking":
      return `Checking ${step.ref}: reading its GGUF header to see whether it fits (nothing is downloaded yet)`;
    case "fits":
      return `Fits this machine: ${step.entry.model ? `${describeFacts(step.entry.model)}; ` : ""}${step.entry.plan?.reason ?? "planned"}`;
    case "forced":
      return `${step.error.message.replace(/ \(--force, or force: true, downloads it anyway\)$/, "")}\nDownloading it anyway (--force).`;
    case "downloading":
      return `Downloading ${formatBytes(step.totalBytes)} to ${step.path}${step.resumedBytes > 0 ? ` (resuming: ${formatBytes(step.resumedBytes)} already there)` : ""}`;
    case "verifying":
      return `Checking the downloaded file`;
    default: {
      const unreachable: never = step;
      return String(unreachable);
    }
  }
}
