import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/** `local-ai ps [--url URL] [--json]`: the models a running serve-http has loaded (its GET /v1/ps), like `ollama ps`. */
export function registerPsCommand(program: Command, deps: CliDeps): void {
  program
    .command("ps")
    .description("the models a running serve-http has loaded: name, size, CPU/GPU split, context, when it unloads")
    .option("--url <url>", "the server (default: http.host and http.port of the config, else http://127.0.0.1:8080)")
    .option("--token <token>", "its bearer token, when it needs one")
    .option("--json", "print the server's answer as JSON (for scripts)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .action(async (_options: unknown, command: Command) => {
      const { runPsCommand } = await import("./ps-action.js");
      await runPsCommand(command, deps);
    });
}
