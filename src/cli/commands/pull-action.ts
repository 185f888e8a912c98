import type { Command } from "commander";
import { formatBytes } from "../../shared/format-bytes.js";
import type { CliDeps } from "../cli-deps.js";
import { exitSoonAfter } from "../exit-soon-after.js";
import { interruptedMessage, pullWithProgress } from "../pull-with-progress.js";
import { writeOut } from "../write-out.js";

export interface PullCommandOptions {
  config?: string;
  force?: boolean;
}

/** The `pull` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runPullCommand(ref: string, command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<PullCommandOptions>();
  try {
    const outcome = await pullWithProgress({ ref, configPath: options.config, force: options.force === true }, deps);
    switch (outcome.status) {
      case "done":
        if (outcome.downloaded) deps.stderr.write(`Saved ${outcome.path} (${formatBytes(outcome.bytes)})\n`);
        // stdout is the path alone, so `$(local-ai pull REF)` is the file.
        await writeOut(deps.stdout, `${outcome.path}\n`);
        deps.setExitCode(0);
        return;
      case "interrupted":
        deps.stderr.write(`${interruptedMessage(ref, outcome.partial)}\n`);
        deps.setExitCode(130);
        return;
      case "failed":
        deps.stderr.write(`local-ai pull: ${outcome.error.message}\n`);
        deps.setExitCode(outcome.error.code === "invalid_params" ? 2 : 1);
        return;
    }
  } finally {
    exitSoonAfter(deps.io);
  }
}
