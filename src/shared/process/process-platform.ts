import { systemCommandRunner, type CommandRunner } from "./command-runner.js";

/**
 * The platform the process layer acts for: which OS's way of spawning, killing and inspecting
 * processes to use, and how to run its helper commands. The app passes the host's; tests inject
 * win32 or darwin with a fake runner to check the commands built there.
 */
export interface ProcessPlatform {
  os: NodeJS.Platform;
  runner: CommandRunner;
}

export function hostProcessPlatform(): ProcessPlatform {
  return { os: process.platform, runner: systemCommandRunner };
}

/**
 * Spawn options for a supervised child. POSIX: detached (its own process group, so a stop reaches
 * whatever it forks) under the parent watchdog. Windows: never detached, because `detached` takes
 * the child out of the job object that ends it with us; there the job object is the watchdog.
 */
export function supervisedDetached(platform: ProcessPlatform): boolean {
  return platform.os !== "win32";
}
