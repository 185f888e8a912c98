#!/usr/bin/env node
// Signals are held from the first instant, before the CLI's own imports (see signal-latch.ts).
import { latchSignals } from "../app/process/signal-latch.js";

const signals = latchSignals();
const { readPackageInfo } = await import("../shared/version.js");
const { runCli } = await import("./program.js");
const { completeDarwinPath } = await import("../shared/platform-env.js");
const { readLoginShellPath } = await import("../shared/login-shell-path.js");

// macOS apps started from Finder get launchd's bare PATH: the login shell's and Homebrew's folders
// are added, for us and every child (llama-server, `npx` MCP servers), before anything resolves a
// program. (The shell runs only in that case: never from a terminal, never off macOS.)
const completed = completeDarwinPath(process.env, process.platform, () => readLoginShellPath(process.env.SHELL));
if (completed !== process.env && completed.PATH !== undefined) process.env.PATH = completed.PATH;

const code = await runCli(process.argv, {
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  version: readPackageInfo().version,
  setExitCode: () => undefined,
  signals,
  io: process,
});
process.exitCode = code;
