import type { Command } from "commander";
import { routeConsole } from "../../app/route-console.js";
import { formatBytes } from "../../shared/format-bytes.js";
import { describeFacts } from "../../diagnostics/checks/model-insights.js";
import { createLogger, flushLogger } from "../../logging/create-logger.js";
import { downloadSettingsOf } from "../../models/download-settings.js";
import { ModelPuller } from "../../models/model-puller.js";
import type { PullStep } from "../../models/pull-model.js";
import { toRuntimeError } from "../../shared/runtime-error.js";
import { configOrDefaults } from "../../config/config-or-defaults.js";
import type { CliDeps } from "../cli-deps.js";
import { DownloadProgress } from "../download-progress.js";
import { writeOut } from "../write-out.js";

export interface PullCommandOptions {
  config?: string;
  force?: boolean;
}

/** How long a finished pull waits for open connections to close before exiting anyway. */
const EXIT_GRACE_MS = 2000;

/** The shell's code for "ended by SIGINT". */
const INTERRUPTED_EXIT = 130;

/** The `pull` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runPullCommand(ref: string, command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<PullCommandOptions>();
  // Quiet by default: the steps below are the output; LOCAL_AI_LOG_LEVEL=debug shows the details.
  const logger = createLogger({ level: "warn", env: deps.env });
  const controller = new AbortController();
  // Ctrl-C stops the download cleanly (the partial file keeps what arrived); a second one exits at once.
  const onInterrupt = (): void => {
    if (controller.signal.aborted) deps.io.exit(INTERRUPTED_EXIT);
    controller.abort("interrupted (Ctrl-C)");
  };
  process.on("SIGINT", onInterrupt);
  const bar = new DownloadProgress(deps.stderr, { tty: deps.stderrIsTTY === true, columns: (deps.stderr as { columns?: number }).columns ?? 80 });
  const say = (line: string): void => {
    bar.end();
    deps.stderr.write(`${line}\n`);
  };
  // stdout is the path alone, even when node-llama-cpp prints (a Hugging Face rate-limit notice).
  const restoreConsole = routeConsole((level, text) => {
    if (level !== "debug") say(text);
  });
  try {
    const { config } = await configOrDefaults(options.config, deps);
    const settings = downloadSettingsOf(config, deps.env);
    const puller = new ModelPuller({ config, settings, logger });
    const result = await puller.pull({
      ref,
      force: options.force === true,
      signal: controller.signal,
      onProgress: (progress) => bar.update(progress.downloadedBytes, progress.totalBytes),
      onStep: (step) => say(describeStep(step)),
    });
    if (result.downloaded) say(`Saved ${result.path} (${formatBytes(result.bytes)})`);
    await writeOut(deps.stdout, `${result.path}\n`);
    deps.setExitCode(0);
  } catch (error) {
    const failure = toRuntimeError(error);
    if (controller.signal.aborted) {
      const partial = typeof failure.details?.partial === "string" ? ` (${failure.details.partial})` : "";
      say(`Interrupted. The partial download is kept${partial}; run \`local-ai pull ${ref}\` again to resume it.`);
      deps.setExitCode(INTERRUPTED_EXIT);
    } else {
      if (failure.code === "internal_error") logger.error({ err: error }, "pull failed");
      say(`local-ai pull: ${failure.message}`);
      deps.setExitCode(failure.code === "invalid_params" ? 2 : 1);
    }
  } finally {
    restoreConsole();
    process.off("SIGINT", onInterrupt);
    await flushLogger(logger);
    // A connection the downloader could not abort (a server that never answered) must not keep
    // the command alive: once the result is out, exit within a moment whatever is left open.
    setTimeout(() => deps.io.exit(), EXIT_GRACE_MS).unref();
  }
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
