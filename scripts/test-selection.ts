// Which compiled test files a test command runs. The selection lives here, not in package.json
// globs: cmd.exe and PowerShell do not expand `*`, node 20's --test does not either, and a
// `VAR=1 node ...` prefix is sh syntax. One Node script runs the same on every shell.
import { readdirSync } from "node:fs";
import path from "node:path";

/** One part of a selection: every `*.test.js` in a folder of dist/test, or those starting with `prefix`. */
export interface TestGroup {
  dir: string;
  prefix?: string;
}

export interface TestSelection {
  groups: readonly TestGroup[];
  /** --test-concurrency; node's default when absent. */
  concurrency?: number;
  env?: Readonly<Record<string, string>>;
}

/** The selections of package.json's test scripts, by name. */
export const SELECTIONS: Readonly<Record<string, TestSelection>> = {
  // `npm test`: every unit and end-to-end test, two files at a time.
  all: { groups: [{ dir: "unit" }, { dir: "e2e" }], concurrency: 2 },
  unit: { groups: [{ dir: "unit" }] },
  package: { groups: [{ dir: "package" }] },
  // `npm run test:stress`: the long versions, one file at a time.
  stress: {
    groups: [
      { dir: "unit", prefix: "fuzz-" },
      { dir: "e2e", prefix: "stdio-random-lines." },
      { dir: "e2e", prefix: "mcp-faults." },
      { dir: "e2e", prefix: "llama-server-faults." },
      { dir: "e2e", prefix: "fault-" },
      { dir: "e2e", prefix: "stdio-soak." },
      { dir: "e2e", prefix: "http-load-disconnects." },
      { dir: "e2e", prefix: "codex-long-prompt." },
      { dir: "e2e", prefix: "codex-long-prompt-cut." },
    ],
    concurrency: 1,
    env: { LOCAL_AI_STRESS: "1" },
  },
};

/** The files of `selection` under `testRoot` (dist/test), sorted within each group as a shell glob would. */
export function testFiles(testRoot: string, selection: TestSelection): string[] {
  const files: string[] = [];
  for (const group of selection.groups) {
    const names = readdirSync(path.join(testRoot, group.dir))
      .filter((name) => name.endsWith(".test.js") && name.startsWith(group.prefix ?? ""))
      .sort();
    if (names.length === 0) throw new Error(`no test files in ${path.join(testRoot, group.dir)} matching ${group.prefix ?? ""}*.test.js: run npm run build first`);
    files.push(...names.map((name) => path.join(testRoot, group.dir, name)));
  }
  return files;
}

/**
 * node's argv for the selection: `--test`, the reporters, the concurrency, the files. TAP goes to
 * stdout as before; `failureReporter` (a module path), when given, adds a summary of the failed
 * tests at the very end of stdout.
 */
export function nodeTestArgs(files: readonly string[], selection: TestSelection, failureReporter?: string): string[] {
  const reporters =
    failureReporter === undefined
      ? []
      : ["--test-reporter=tap", "--test-reporter-destination=stdout", `--test-reporter=${failureReporter}`, "--test-reporter-destination=stdout"];
  return ["--test", ...reporters, ...(selection.concurrency === undefined ? [] : [`--test-concurrency=${selection.concurrency}`]), ...files];
}
