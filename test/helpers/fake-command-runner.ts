import type { CommandResult, CommandRunner } from "../../src/shared/process/command-runner.js";
import type { ProcessPlatform } from "../../src/shared/process/process-platform.js";

export interface RecordedCommand {
  file: string;
  args: readonly string[];
  sync: boolean;
}

/** A CommandRunner that records every command and answers from `reply` (recorded real output). */
export function fakePlatform(os: NodeJS.Platform, reply: (command: RecordedCommand) => CommandResult = () => ({ exitCode: 0, stdout: "" })): {
  platform: ProcessPlatform;
  commands: RecordedCommand[];
} {
  const commands: RecordedCommand[] = [];
  const runner: CommandRunner = {
    run(file, args) {
      const command = { file, args, sync: false };
      commands.push(command);
      return Promise.resolve(reply(command));
    },
    runSync(file, args) {
      const command = { file, args, sync: true };
      commands.push(command);
      return reply(command);
    },
  };
  return { platform: { os, runner }, commands };
}
