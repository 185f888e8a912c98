import type { Command } from "commander";
import { loadConfig } from "../../config/load-config.js";
import { renderDoctorTable } from "../../diagnostics/render-doctor.js";
import { runDoctor } from "../../diagnostics/run-doctor.js";
import type { CliDeps } from "../cli-deps.js";

interface DoctorOptions {
  json?: boolean;
  config?: string;
}

export function registerDoctorCommand(program: Command, deps: CliDeps): void {
  program
    .command("doctor")
    .description("check this machine, the config, model files, llama-server and ports; exit code 1 when a check fails")
    .option("--json", "print the report as one JSON document (for scripts)")
    .option("--config <file>", "config file (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .action(async (_options: DoctorOptions, command: Command) => {
      // optsWithGlobals: --config may sit on the program (before the command name) or on doctor.
      const options = command.optsWithGlobals<DoctorOptions>();
      const configState = await loadConfig({ flag: options.config, env: deps.env, cwd: deps.cwd });
      const report = await runDoctor({ configState, version: deps.version, env: deps.env });
      const text = options.json === true ? `${JSON.stringify(report, null, 2)}\n` : renderDoctorTable(report, { color: deps.stdoutIsTTY });
      await write(deps.stdout, text);
      deps.setExitCode(report.ok ? 0 : 1);
    });
}

/** Resolves once the text is handed to the OS, so a piped reader gets all of it before exit. */
function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (error) => (error === undefined || error === null ? resolve() : reject(error)));
  });
}
