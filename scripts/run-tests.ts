// `node dist/scripts/run-tests.js [all|unit|package|stress]`: runs a selection of the compiled
// tests (scripts/test-selection.ts) on node's test runner, with its environment, and exits with
// the runner's code. Used by package.json's test scripts on every shell (sh, cmd, PowerShell).
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { nodeTestArgs, SELECTIONS, testFiles } from "./test-selection.js";

const name = process.argv[2] ?? "all";
const selection = SELECTIONS[name];
if (selection === undefined) {
  process.stderr.write(`run-tests: unknown selection "${name}"; one of ${Object.keys(SELECTIONS).join(", ")}\n`);
  process.exit(2);
}
const testRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "test");
const files = testFiles(testRoot, selection);
process.stderr.write(`run-tests: ${name}: ${files.length} files\n`);
const failureReporter = pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), "failure-summary-reporter.js")).href;
const child = spawn(process.execPath, nodeTestArgs(files, selection, failureReporter), { stdio: "inherit", env: { ...process.env, ...selection.env } });
// Ctrl+C reaches the runner through the console group; we only wait for it.
process.on("SIGINT", () => undefined);
child.on("exit", (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
