import type { Command } from "commander";
import { initConfig } from "../../app/init-config.js";
import type { CliDeps } from "../cli-deps.js";

export interface InitCommandOptions {
  model?: string;
  force?: boolean;
}

/** The `init` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runInitCommand(command: Command, deps: CliDeps): Promise<void> {
  const options = command.optsWithGlobals<InitCommandOptions>();
  const outcome = await initConfig({ cwd: deps.cwd, env: deps.env, model: options.model, force: options.force === true });
  if (!outcome.ok) {
    deps.stderr.write(`local-ai init: ${outcome.message}\n`);
    deps.setExitCode(1);
    return;
  }
  const lines = [
    `${outcome.overwritten ? "Replaced" : "Wrote"} ${outcome.path}: model ${outcome.model}, agent assistant, no tools.`,
    ...outcome.notes.map((note) => `Note: ${note}`),
    "Next:",
  ];
  const width = Math.max(...outcome.next.map((step) => step.command.length));
  for (const step of outcome.next) lines.push(`  ${step.command.padEnd(width)}   # ${step.why}`);
  deps.stdout.write(`${lines.join("\n")}\n`);
}
