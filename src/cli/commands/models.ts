import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/**
 * `local-ai models [--json]`: the models in app.models_dir (what each is, whether it is whole,
 * which config entries use it) and partial downloads; `local-ai models rm <file> [--force]`
 * removes one (every part, and its partial download).
 */
export function registerModelsCommand(program: Command, deps: CliDeps): void {
  const models = program
    .command("models")
    .description("list the downloaded models (file, size, architecture, parameters, quantization, trained context, used by)")
    .option("--json", "print the list as one JSON document (for scripts)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .action(async (_options: unknown, command: Command) => {
      const { runModelsListCommand } = await import("./models-action.js");
      await runModelsListCommand(command, deps);
    });
  models
    .command("rm")
    .description("delete a downloaded model from app.models_dir (all its parts and any partial download)")
    .argument("<file>", "its file name in app.models_dir, as `local-ai models` shows it")
    .option("--force", "delete it even when the config uses it")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .action(async (file: string, _options: unknown, command: Command) => {
      const { runModelsRemoveCommand } = await import("./models-action.js");
      await runModelsRemoveCommand(file, command, deps);
    });
}
