import type { Command } from "commander";
import { INTERRUPTED_EXIT, pullFromTerminal } from "../../app/pull-from-terminal.js";
import { formatBytes } from "../../shared/format-bytes.js";
import { describeFacts } from "../../diagnostics/checks/model-insights.js";
import type { PullStep } from "../../models/pull-model.js";
import type { CliDeps } from "../cli-deps.js";
import { DownloadProgress } from "../download-progress.js";
import { writeOut } from "../write-out.js";

export interface PullCommandOptions {
  config?: string;
  force?: boolean;
}

/** How long a finished pull waits for open connections to close before exiting anyway. */
const EXIT_GRACE_MS = 2000;

/** The `pull` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runPullCommand(ref: string, command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<PullCommandOptions>();
  const bar = new DownloadProgress(deps.stderr, { tty: deps.stderrIsTTY === true, columns: (deps.stderr as { columns?: number }).columns ?? 80 });
  const say = (line: string): void => {
    bar.end();
    deps.stderr.write(`${line}\n`);
  };
  const outcome = await pullFromTerminal({
    ref,
    force: options.force === true,
    config: options.config,
    cwd: deps.cwd,
    env: deps.env,
    onProgress: (downloaded, total) => bar.update(downloaded, total),
    onStep: (step) => say(describeStep(step)),
    onConsole: say,
    exit: (code) => deps.io.exit(code),
  });
  try {
    if (outcome.ok) {
      if (outcome.result.downloaded) say(`Saved ${outcome.result.path} (${formatBytes(outcome.result.bytes)})`);
      await writeOut(deps.stdout, `${outcome.result.path}\n`);
      deps.setExitCode(0);
    } else if (outcome.interrupted) {
      const { failure } = outcome;
      const partial = typeof failure.details?.partial === "string" ? ` (${failure.details.partial})` : "";
      say(`Interrupted. The partial download is kept${partial}; run \`local-ai pull ${ref}\` again to resume it.`);
      deps.setExitCode(INTERRUPTED_EXIT);
    } else {
      say(`local-ai pull: ${outcome.failure.message}`);
      deps.setExitCode(outcome.failure.code === "invalid_params" ? 2 : 1);
    }
  } finally {
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
