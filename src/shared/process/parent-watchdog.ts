// A child that dies with its parent, whatever kills the parent (SIGKILL and OOM included, where no
// exit hook of ours runs), without a native addon: the child is started through a tiny POSIX sh
// script that forks a watchdog and then execs the real program in its own place.
//
// - The script's pid is the program's pid after the exec, and we stay its parent: the caller sees
//   the program's own exit code and signal, and signals it by that pid as before.
// - The watchdog stays in the program's process group (a non-interactive sh has no job control),
//   holding the read end of a pipe whose only write end is our process (the spawn's stdin; node
//   opens its own descriptors close-on-exec, so no other child inherits it). When our process
//   dies the kernel closes that end, the watchdog's `read` sees EOF and it SIGKILLs its group:
//   the program and itself. A program that exits on its own leaves the watchdog waiting until
//   we close the pipe (ServerProcess does, on exit), so no watchdog outlives its program for long.
// - The program gets /dev/null on stdin and never sees the pipe; the watchdog's output goes to
//   /dev/null, so the program's stdout and stderr close when the program exits.
// - A stop sent to the group (TERM, then KILL) reaches the watchdog too; it just dies.
// - macOS strips DYLD_* from the environment of /bin/sh (System Integrity Protection protects it),
//   so DYLD_LIBRARY_PATH travels as LOCAL_AI_DYLD_LIBRARY_PATH and the script restores it right
//   before the exec (the program itself is not protected, so it keeps it).

/** The name DYLD_LIBRARY_PATH travels under through the watchdog's /bin/sh. */
export const DYLD_CARRIER = "LOCAL_AI_DYLD_LIBRARY_PATH";

/** The watchdog's $0: names it in `ps` and /proc (its argv is `sh -c SCRIPT NAME program args...`). */
export const WATCHDOG_NAME = "local-ai-watchdog";

const SCRIPT = [
  'if [ -n "${LOCAL_AI_DYLD_LIBRARY_PATH+x}" ]; then DYLD_LIBRARY_PATH=$LOCAL_AI_DYLD_LIBRARY_PATH; export DYLD_LIBRARY_PATH; unset LOCAL_AI_DYLD_LIBRARY_PATH; fi',
  "exec 3<&0 0</dev/null",
  "(while read -r line <&3; do :; done; kill -s KILL 0) >/dev/null 2>&1 &",
  'exec 3<&- "$@"',
].join("\n");

export interface WatchedCommand {
  file: string;
  args: string[];
  /** True when the command runs under the watchdog (its stdin must then be a pipe we hold open). */
  watched: boolean;
}

/**
 * The command that runs `file args` under the watchdog; spawn it detached (its own process group)
 * with stdin a pipe that is never written to. Windows has no sh (and no process groups): there the
 * command is returned as is.
 */
export function withParentWatchdog(file: string, args: readonly string[], platform: NodeJS.Platform = process.platform): WatchedCommand {
  if (platform === "win32") return { file, args: [...args], watched: false };
  return { file: "/bin/sh", args: ["-c", SCRIPT, WATCHDOG_NAME, file, ...args], watched: true };
}

/**
 * The environment for a watched command: DYLD_LIBRARY_PATH also under the carrier name, so it
 * survives /bin/sh on macOS. Unwatched commands (Windows) get `env` unchanged.
 */
export function watchdogEnv(env: Readonly<Record<string, string>>, command: WatchedCommand): Record<string, string> {
  const dyld = env.DYLD_LIBRARY_PATH;
  return command.watched && dyld !== undefined ? { ...env, [DYLD_CARRIER]: dyld } : { ...env };
}
