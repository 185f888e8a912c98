import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

export function registerDoctorCommand(program: Command, deps: CliDeps): void {
  program
    .command("doctor")
    .description("check this machine, the config, model files, llama-server and ports; exit code 1 when a check fails")
    .option("--json", "print the report as one JSON document (for scripts)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    // The implementation (and everything it imports) loads only when this command runs.
    .action(async (_options: unknown, command: Command) => {
      const { runDoctorCommand } = await import("./doctor-action.js");
      await runDoctorCommand(command, deps);
    });
}
