import { pullFromTerminal } from "../app/commands/pull-from-terminal.js";
import { describeFacts } from "../diagnostics/checks/model-insights.js";
import type { PullStep } from "../models/pull-model.js";
import { formatBytes } from "../shared/format-bytes.js";
import type { RuntimeError } from "../shared/runtime-error.js";
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
 * bar (plain lines when stderr is not a terminal) on stderr, over app/commands/pull-from-terminal.ts
 * (Ctrl-C, logs, console routing). stdout is left to the caller.
 */
export async function pullWithProgress(options: PullWithProgressOptions, deps: CliDeps): Promise<PullRunOutcome> {
  const bar = new DownloadProgress(deps.stderr, { tty: deps.stderrIsTTY === true, columns: (deps.stderr as { columns?: number }).columns ?? 80 });
  const say = (line: string): void => {
    bar.end();
    deps.stderr.write(`${line}\n`);
  };
  const outcome = await pullFromTerminal({
    ref: options.ref,
    force: options.force,
    config: options.configPath,
    cwd: deps.cwd,
    env: deps.env,
    onProgress: (downloaded, total) => bar.update(downloaded, total),
    onStep: (step) => say(describeStep(step)),
    onConsole: say,
    exit: (code) => deps.io.exit(code),
  });
  bar.end();
  if (outcome.ok) return { status: "done", path: outcome.result.path, bytes: outcome.result.bytes, downloaded: outcome.result.downloaded };
  if (outcome.interrupted) return { status: "interrupted", partial: typeof outcome.failure.details?.partial === "string" ? outcome.failure.details.partial : undefined };
  return { status: "failed", error: outcome.failure };
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
