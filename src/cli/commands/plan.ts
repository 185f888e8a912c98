import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/**
 * `local-ai plan`: whether each model fits this machine, with GPU layers, context size, threads,
 * memory estimates and (llama-server) the command line. Exit 1 when a model cannot be planned or
 * the config is missing or invalid; 2 for an unknown --model (a usage error).
 */
export function registerPlanCommand(program: Command, deps: CliDeps): void {
  program
    .command("plan")
    .description("say whether each configured model fits this machine (GPU layers, context size, memory) and why; exit code 1 when one does not")
    .option("--json", "print the report as one JSON document (for scripts)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .option("--model <name|ref>", "plan only this model: a key under llama.models, or a model not downloaded yet (https URL, hf:owner/repo:QUANT) or a .gguf path")
    // The implementation (and everything it imports) loads only when this command runs.
    .action(async (_options: unknown, command: Command) => {
      const { runPlanCommand } = await import("./plan-action.js");
      await runPlanCommand(command, deps);
    });
}
