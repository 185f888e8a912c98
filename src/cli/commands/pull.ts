import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/**
 * `local-ai pull <ref>`: gets a model (https URL, hf:owner/repo:QUANT, hf:owner/repo/file.gguf)
 * into app.models_dir after checking that it fits this machine; progress on stderr, the file's
 * path on stdout. Exit 0 done (or already there), 1 refused or failed, 2 a bad reference, 130
 * interrupted (the partial file is kept; the next pull resumes it).
 */
export function registerPullCommand(program: Command, deps: CliDeps): void {
  program
    .command("pull")
    .description("download a model (https URL or hf:owner/repo:QUANT) after checking it fits this machine; prints its path")
    .argument("<ref>", "an https:// URL of a .gguf file, hf:owner/repo:QUANT, or hf:owner/repo/file.gguf")
    .option("--force", "download even when the fit check says the model does not fit")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml; without one, models go to ./.local-ai/models)")
    .action(async (ref: string, _options: unknown, command: Command) => {
      const { runPullCommand } = await import("./pull-action.js");
      await runPullCommand(ref, command, deps);
    });
}
