import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/** `local-ai init`: a starter config.yaml in the current folder, and on request its model (docs/chat.md "Getting started"). */
export function registerInitCommand(program: Command, deps: CliDeps): void {
  program
    .command("init")
    .description("write a starter config.yaml in the current folder: one model, one agent, no tools; then print the next commands")
    .option("--model <ref>", "the model: a GGUF file, an https:// URL or an hf: reference (default: hf:Qwen/Qwen3-4B-GGUF:Q4_K_M)")
    .option("--force", "replace an existing config.yaml")
    .option("--pull", "download the model now, after checking that it fits this machine (asked on a terminal when neither --pull nor --no-pull is given)")
    .option("--no-pull", "do not download the model, not even ask")
    // The implementation (and everything it imports) loads only when this command runs.
    .action(async (_options: unknown, command: Command) => {
      const { runInitCommand } = await import("./init-action.js");
      await runInitCommand(command, deps);
    });
}
