import type { Command } from "commander";
import { loadConfig } from "../../config/load-config.js";
import { renderDoctorTable } from "../../diagnostics/render-doctor.js";
import { runDoctor } from "../../diagnostics/run-doctor.js";
import type { CliDeps } from "../cli-deps.js";
import { writeOut } from "../write-out.js";

export interface DoctorOptions {
  json?: boolean;
  config?: string;
}

/** The `doctor` action, imported only when this command runs (see program.ts: lazy commands). */
export async function runDoctorCommand(command: Command, deps: CliDeps): Promise<void> {
  // optsWithGlobals: --config may sit on the program (before the command name) or on doctor.
  const options = command.optsWithGlobals<DoctorOptions>();
  const configState = await loadConfig({ flag: options.config, env: deps.env, cwd: deps.cwd });
  const report = await runDoctor({ configState, version: deps.version, env: deps.env });
  const text = options.json === true ? `${JSON.stringify(report, null, 2)}\n` : renderDoctorTable(report, { color: deps.stdoutIsTTY });
  await writeOut(deps.stdout, text);
  deps.setExitCode(report.ok ? 0 : 1);
}
