import { Command, CommanderError } from "commander";
import { releaseToDefault } from "../app/process/signal-latch.js";
import type { CliDeps } from "./cli-deps.js";
import { registerChatCommand } from "./commands/chat.js";
import { registerDoctorCommand } from "./commands/doctor.js";
import { registerInitCommand } from "./commands/init.js";
import { registerMcpCommand } from "./commands/mcp.js";
import { registerPlanCommand } from "./commands/plan.js";
import { registerModelsCommand } from "./commands/models.js";
import { registerPsCommand } from "./commands/ps.js";
import { registerPodCommand } from "./commands/pod.js";
import { registerPullCommand } from "./commands/pull.js";
import { registerServeHttpCommand } from "./commands/serve-http.js";
import { registerServeSocketCommand } from "./commands/serve-socket.js";
import { registerServeStdioCommand } from "./commands/serve-stdio.js";

const SERVING_COMMANDS: ReadonlySet<string> = new Set(["serve-stdio", "serve-http", "serve-socket"]);

/** The command tree; each command lives in its own file under commands/. */
export function createProgram(deps: CliDeps): Command {
  const program = new Command();
  program
    .name("local-ai")
    .description("A local AI agent runtime: stdio NDJSON, OpenAI-compatible HTTP and a terminal CLI over one agent core")
    .version(deps.version, "-v, --version")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => deps.stdout.write(text),
      writeErr: (text) => deps.stderr.write(text),
    });
  // Serve commands take held signals over (startServerProcess); every other command lets them act now.
  program.hook("preAction", (_program, action) => {
    if (!SERVING_COMMANDS.has(action.name())) releaseToDefault(deps.signals);
  });
  registerServeStdioCommand(program, deps);
  registerServeHttpCommand(program, deps);
  registerServeSocketCommand(program, deps);
  registerPodCommand(program, deps);
  registerDoctorCommand(program, deps);
  registerPlanCommand(program, deps);
  registerChatCommand(program, deps);
  registerInitCommand(program, deps);
  registerPullCommand(program, deps);
  registerModelsCommand(program, deps);
  registerPsCommand(program, deps);
  registerMcpCommand(program, deps);
  return program;
}

/** Runs the CLI and returns the exit code (usage errors are 2, as with most Unix tools). */
export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number> {
  let exitCode = 0;
  const program = createProgram({ ...deps, setExitCode: (code) => (exitCode = code) });
  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : 2;
    }
    throw error;
  } finally {
    // --version, --help and usage errors run no action: a signal held meanwhile still acts.
    releaseToDefault(deps.signals);
  }
  return exitCode;
}
