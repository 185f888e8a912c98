#!/usr/bin/env node
import { readPackageInfo } from "../shared/version.js";
import { runCli } from "./program.js";

const code = await runCli(process.argv, {
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  version: readPackageInfo().version,
  setExitCode: () => undefined,
});
process.exitCode = code;
