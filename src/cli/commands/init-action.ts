import type { Command } from "commander";
import { initConfig, type NextStep } from "../../app/commands/init-config.js";
import { formatBytes } from "../../shared/format-bytes.js";
import type { CliDeps } from "../cli-deps.js";
import { exitSoonAfter } from "../exit-soon-after.js";
import { askYesNo } from "../ask-yes-no.js";
import { interruptedMessage, pullWithProgress } from "../pull-with-progress.js";

export interface InitCommandOptions {
  model?: string;
  force?: boolean;
  /** true: --pull; false: --no-pull; undefined: ask on a terminal, else do not download. */
  pull?: boolean;
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
  const notes = [...outcome.notes];
  if (options.pull === true && !outcome.remote) notes.push(`--pull: ${outcome.model} is a local file, nothing to download`);
  deps.stdout.write(`${[`${outcome.overwritten ? "Replaced" : "Wrote"} ${outcome.path}: model ${outcome.model}, agent assistant, no tools.`, ...notes.map((note) => `Note: ${note}`)].join("\n")}\n`);

  let next = outcome.next;
  if (outcome.remote && (await wantsPull(options.pull, outcome.model, deps))) {
    try {
      // The config just written decides where the model goes (its app.models_dir).
      const pulled = await pullWithProgress({ ref: outcome.model, configPath: outcome.path, force: false }, deps);
      if (pulled.status === "done") {
        deps.stdout.write(`Model ${pulled.downloaded ? "downloaded" : "already there"}: ${pulled.path} (${formatBytes(pulled.bytes)})\n`);
        next = next.filter((step) => step.kind !== "pull");
      } else if (pulled.status === "interrupted") {
        deps.stderr.write(`${interruptedMessage(outcome.model, pulled.partial)}\n`);
        deps.setExitCode(130);
      } else {
        deps.stderr.write(`local-ai init: the config is written but the model was not downloaded: ${pulled.error.message}\n`);
        if (pulled.error.details?.reason === "does_not_fit") next = next.map((step) => (step.kind === "pull" ? forcedPull(step) : step));
        deps.setExitCode(1);
      }
    } finally {
      exitSoonAfter(deps.io);
    }
  }
  deps.stdout.write(renderNext(next));
}

/** Download when asked by flag; with neither flag, ask only a person at a terminal. */
async function wantsPull(flag: boolean | undefined, model: string, deps: CliDeps): Promise<boolean> {
  if (flag !== undefined) return flag;
  if (deps.io.stdin.isTTY !== true || deps.stderrIsTTY !== true) return false;
  return askYesNo(deps.io.stdin, deps.stderr, `Download ${model} now? It is checked first against this machine (only its header is read). [Y/n] `, true);
}

function forcedPull(step: NextStep): NextStep {
  return { ...step, command: step.command.replace(/^local-ai pull (\S+)/, "local-ai pull $1 --force"), why: "download it anyway (the fit check says it does not fit this machine)" };
}

function renderNext(next: readonly NextStep[]): string {
  const width = Math.max(...next.map((step) => step.command.length));
  return `${["Next:", ...next.map((step) => `  ${step.command.padEnd(width)}   # ${step.why}`)].join("\n")}\n`;
}
