// package.json's test scripts run on cmd and PowerShell too: no shell globs, no `VAR=1` prefixes;
// the runner script (scripts/run-tests.ts) finds the files itself, the same ones the globs did.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { nodeTestArgs, SELECTIONS, testFiles } from "../../scripts/test-selection.js";

const DIST_TEST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPO = path.resolve(DIST_TEST, "..", "..");
const scripts = (JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;

/** What `dist/test/<dir>/<prefix>*.test.js` expanded to in sh. */
const globbed = (dir: string, prefix = ""): string[] =>
  readdirSync(path.join(DIST_TEST, dir)).filter((name) => name.startsWith(prefix) && name.endsWith(".test.js")).sort().map((name) => path.join(DIST_TEST, dir, name));

test("no package.json script uses a shell glob or a VAR=value prefix", () => {
  for (const [name, command] of Object.entries(scripts)) {
    assert.doesNotMatch(command, /\*/, `${name}: ${command}`);
    assert.doesNotMatch(command, /(^|&&|;|\|)\s*[A-Za-z_][A-Za-z0-9_]*=/, `${name}: ${command}`);
  }
  assert.match(scripts.test ?? "", /node dist\/scripts\/run-tests\.js all$/);
  assert.match(scripts["test:stress"] ?? "", /node dist\/scripts\/run-tests\.js stress$/);
});

test("npm test's selection: every unit and e2e test file (this one included), two at a time", () => {
  const files = testFiles(DIST_TEST, SELECTIONS.all!);
  assert.deepEqual(files, [...globbed("unit"), ...globbed("e2e")]);
  assert.ok(files.includes(fileURLToPath(import.meta.url)));
  assert.ok(files.some((file) => file.endsWith(path.join("e2e", "serve-stdin-lifeline.test.js"))));
  assert.deepEqual(nodeTestArgs(["a.test.js"], SELECTIONS.all!), ["--test", "--test-concurrency=2", "a.test.js"]);
});

test("test:stress's selection is the old glob list plus the Codex long-prompt runs, one at a time, with LOCAL_AI_STRESS=1", () => {
  const stress = SELECTIONS.stress!;
  assert.deepEqual(testFiles(DIST_TEST, stress), [
    ...globbed("unit", "fuzz-"),
    ...["stdio-random-lines", "mcp-faults", "llama-server-faults"].map((name) => path.join(DIST_TEST, "e2e", `${name}.test.js`)),
    ...globbed("e2e", "fault-"),
    ...["stdio-soak", "http-load-disconnects", "codex-long-prompt", "codex-long-prompt-cut"].map((name) => path.join(DIST_TEST, "e2e", `${name}.test.js`)),
  ]);
  assert.equal(stress.concurrency, 1);
  assert.deepEqual(stress.env, { LOCAL_AI_STRESS: "1" });
});

test("a selection that finds no file fails instead of running nothing; an unknown selection exits 2", async () => {
  assert.throws(() => testFiles(DIST_TEST, { groups: [{ dir: "unit", prefix: "no-such-test-" }] }), /no test files in .*unit matching no-such-test-\*\.test\.js/);
  const run = promisify(execFile);
  await assert.rejects(run(process.execPath, [path.join(REPO, "dist", "scripts", "run-tests.js"), "nope"]), (error: { code?: number; stderr?: string }) => {
    assert.equal(error.code, 2);
    assert.match(error.stderr ?? "", /unknown selection "nope"; one of all, unit, package, stress/);
    return true;
  });
});

test("with the failure reporter, TAP still goes to stdout and the failed tests are named again at its end", async () => {
  assert.deepEqual(nodeTestArgs(["a.test.js"], SELECTIONS.all!, "file:///r.js"), [
    "--test",
    "--test-reporter=tap",
    "--test-reporter-destination=stdout",
    "--test-reporter=file:///r.js",
    "--test-reporter-destination=stdout",
    "--test-concurrency=2",
    "a.test.js",
  ]);
  const dir = mkdtempSync(path.join(os.tmpdir(), "local-ai-reporter-"));
  try {
    const file = path.join(dir, "sample.test.mjs");
    writeFileSync(
      file,
      [
        'import assert from "node:assert/strict";',
        'import { describe, test } from "node:test";',
        'test("passes", () => {});',
        'describe("a suite", () => { test("breaks", () => { assert.equal(1 + 1, 3, "arithmetic moved"); }); });',
      ].join("\n"),
    );
    const reporter = pathToFileURL(path.join(REPO, "dist", "scripts", "failure-summary-reporter.js")).href;
    const run = promisify(execFile);
    // Without this the inner runner sees it runs under a test runner and reports to it instead.
    const childEnv = { ...process.env };
    delete childEnv.NODE_TEST_CONTEXT;
    await assert.rejects(run(process.execPath, nodeTestArgs([file], { groups: [] }, reporter), { cwd: dir, env: childEnv }), (error: { code?: number; stdout?: string }) => {
      assert.equal(error.code, 1);
      const stdout = error.stdout ?? "";
      assert.match(stdout, /^ok 1 - passes$/m);
      const summary = stdout.slice(stdout.indexOf("# ---- 1 failed test(s) ----"));
      assert.ok(stdout.includes("# ---- 1 failed test(s) ----"), stdout);
      assert.match(summary, /# FAILED: breaks\n# {3}in .*sample\.test\.mjs\n/);
      assert.match(summary, /# {5}AssertionError.*arithmetic moved/);
      assert.doesNotMatch(summary, /FAILED: a suite/);
      return true;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
