#!/usr/bin/env node
// Signals are held from the first instant, before the CLI's own imports (see signal-latch.ts).
import { latchSignals } from "../app/signal-latch.js";

const signals = latchSignals();
const { readPackageInfo } = await import("../shared/version.js");
const { runCli } = await import("./program.js");

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
