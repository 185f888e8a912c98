import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/** `local-ai init`: a starter config.yaml in the current folder (docs/chat.md "Getting started"). */
export function registerInitCommand(program: Command, deps: CliDeps): void {
  program
    .command("init")
    .description("Write a starter config.yaml in the current folder: one model, one agent, no tools; then print the next commands")
    .option("--model <ref>", "the model: a GGUF file, an https:// URL or an hf: reference (default: hf:Qwen/Qwen3-4B-GGUF:Q4_K_M)")
    .option("--force", "replace an existing config.yaml")
    // The implementation (and everything it imports) loads only when this command runs.
    .action(async (_options: unknown, command: Command) => {
      const { runInitCommand } = await import("./init-action.js");
      await runInitCommand(command, deps);
    });
}
