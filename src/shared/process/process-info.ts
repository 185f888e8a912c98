// A live process's command line and start time, per platform: /proc on Linux, `ps -ww` on macOS
// (and other POSIX systems), CIM (Win32_Process through PowerShell) on Windows. Used to prove that
// a pid named by a pid file is still the server we started before anything is killed.
import { processStartTime } from "./process-start-time.js";
import type { ProcessPlatform } from "./process-platform.js";
import { readCommandLine } from "./read-command-line.js";
import { splitWindowsCommandLine } from "./windows-command-line.js";

export interface ProcessInfo {
  /**
   * The arguments. Exact on Linux and Windows. From `ps` (macOS) the line is joined with spaces:
   * it is split after `executable` when the line starts with it (a path like `My App.app` stays
   * whole), the rest on spaces, so only flags and values without spaces read back exactly.
   */
  argv: string[];
  /** Epoch ms; null where it cannot be read. */
  startedAt: number | null;
}

export interface ProcessInfoOptions {
  /** The executable the caller expects (the recorded binary): lets a `ps` line keep its spaces. */
  executable?: string;
}

/** null when the process is gone or cannot be read. */
export async function readProcessInfo(pid: number, platform: ProcessPlatform, options: ProcessInfoOptions = {}): Promise<ProcessInfo | null> {
  if (platform.os === "linux") {
    const [argv, startedAt] = await Promise.all([readCommandLine(pid), processStartTime(pid)]);
    return argv === null ? null : { argv, startedAt };
  }
  if (platform.os === "win32") {
    const result = await platform.runner.run("powershell.exe", cimQueryArgs(pid), { timeoutMs: 15_000 });
    return result.exitCode === 0 ? parseCimOutput(result.stdout) : null;
  }
  const result = await platform.runner.run("ps", psArgs(pid), { timeoutMs: 5000 });
  return result.exitCode === 0 ? parsePsOutput(result.stdout, options.executable) : null;
}

/** `ps` with an unbounded width (-ww: never cut), the start time, then the whole command line. */
export function psArgs(pid: number): string[] {
  return ["-ww", "-o", "lstart=", "-o", "command=", "-p", String(pid)];
}

/** lstart is always `Www Mmm dd hh:mm:ss yyyy` (24 characters, C locale), then the command. */
const PS_LINE = /^\s*([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\s+(.*\S)\s*$/;

export function parsePsOutput(stdout: string, executable?: string): ProcessInfo | null {
  const line = stdout.split("\n").find((candidate) => candidate.trim() !== "");
  const match = line === undefined ? null : PS_LINE.exec(line);
  if (match === null) return null;
  const started = Date.parse(match[1] ?? "");
  const command = match[2] ?? "";
  let argv: string[];
  if (executable !== undefined && (command === executable || command.startsWith(`${executable} `))) {
    argv = [executable, ...splitOnSpaces(command.slice(executable.length))];
  } else {
    argv = splitOnSpaces(command);
  }
  return { argv, startedAt: Number.isNaN(started) ? null : started };
}

function splitOnSpaces(text: string): string[] {
  return text.split(/\s+/).filter((part) => part !== "");
}

/** A PowerShell one-liner: the process's CommandLine and its UTC start, as one JSON object. */
export function cimQueryArgs(pid: number): string[] {
  const script = [
    `$p = Get-CimInstance -ClassName Win32_Process -Filter 'ProcessId=${pid}'`,
    "if ($p) { [pscustomobject]@{ CommandLine = $p.CommandLine; Start = $p.CreationDate.ToUniversalTime().ToString('o') } | ConvertTo-Json -Compress }",
  ].join("; ");
  return ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command", script];
}

export function parseCimOutput(stdout: string): ProcessInfo | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout.trim());
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const { CommandLine: commandLine, Start: start } = parsed as Record<string, unknown>;
  // CommandLine is null for processes of other users (no rights to read it): unprovable, so none.
  if (typeof commandLine !== "string" || commandLine.trim() === "") return null;
  const started = typeof start === "string" ? Date.parse(start) : Number.NaN;
  return { argv: splitWindowsCommandLine(commandLine.trim()), startedAt: Number.isNaN(started) ? null : started };
}
