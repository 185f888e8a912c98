import type { Command } from "commander";
import type { CliDeps } from "../cli-deps.js";

/**
 * `local-ai pod`: a terminal client for `serve-socket`. Prints every event readably; sends what
 * is typed (a method word, `run <text>`, a raw JSON line, or plain text as `run`). With `--run`
 * it runs one turn and exits 0 when it finished, 1 on an error or cancel, 3 when it paused.
 */
export function registerPodCommand(program: Command, deps: CliDeps): void {
  program
    .command("pod")
    .description("connect to a pod (serve-socket): watch its events, send methods, or --run one turn")
    .option("--config <file>", "config file, for the default socket path (default: $LOCAL_AI_CONFIG, then ./config.yaml)")
    .option("--socket <path>", "socket path (default: <data_dir>/pod.sock)")
    .option("--run <text>", "run one turn, print it, and exit (0 finished, 1 error or cancelled, 3 paused)")
    // The implementation (and everything it imports) loads only when this command runs.
    .action(async (_options: unknown, command: Command) => {
      const { runPodCommand } = await import("./pod-action.js");
      await runPodCommand(command, deps);
    });
}
