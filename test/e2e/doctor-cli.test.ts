import assert from "node:assert/strict";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { DoctorReport } from "../../src/diagnostics/doctor-report.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { configYaml } from "../helpers/config-yaml.js";
import { runCli } from "../helpers/run-cli.js";
import { freePort } from "../helpers/free-port.js";

describe("local-ai doctor (built CLI)", () => {
  let dir = "";
  let config = "";

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "doctor-e2e-"));
    config = path.join(dir, "config.yaml");
    // A complete model: doctor also plans it, and a header-only file is rightly not loadable.
    await copyFile(await ensureFixture("tiny"), path.join(dir, "tiny.gguf"));
    await writeFile(
      config,
      configYaml({
        app: { data_dir: "./data" },
        llama: { models: { default: { engine: "embedded", path: "./tiny.gguf" } } },
        agents: { assistant: { model: "default" } },
        http: { host: "127.0.0.1", port: await freePort() },
      }),
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("prints exactly one JSON report and exits 0 with a valid config", async () => {
    const run = await runCli(["doctor", "--json", "--config", config], dir);
    let report: DoctorReport;
    assert.doesNotThrow(() => {
      report = JSON.parse(run.stdout) as DoctorReport;
    }, `stdout is one JSON document and nothing else:\n${run.stdout}\nstderr:\n${run.stderr}`);
    report = JSON.parse(run.stdout) as DoctorReport;
    assert.ok(Array.isArray(report.checks) && report.checks.length >= 7);
    assert.equal(report.ok, true, JSON.stringify(report.checks.filter((check) => check.status === "fail"), null, 2));
    assert.equal(report.checks.find((check) => check.id === "model.default")?.status, "ok");
    assert.equal(run.stdout.trim(), JSON.stringify(report, null, 2), "nothing but the report on stdout");
    assert.equal(run.code, 0);
  });

  it("exits 1 with a missing config, still printing the report", async () => {
    const run = await runCli(["doctor", "--json", "--config", path.join(dir, "missing.yaml")], dir);
    const report = JSON.parse(run.stdout) as DoctorReport;
    assert.equal(report.ok, false);
    const check = report.checks.find((candidate) => candidate.id === "config");
    assert.equal(check?.status, "fail");
    assert.match(check?.fix ?? "", /config\.example\.yaml/);
    assert.equal(run.code, 1);
  });

  it("prints a human table with every check title without --json", async () => {
    const json = JSON.parse((await runCli(["doctor", "--json", "--config", config], dir)).stdout) as DoctorReport;
    const run = await runCli(["doctor", "--config", config], dir);
    assert.equal(run.code, 0, run.stderr);
    for (const check of json.checks) assert.ok(run.stdout.includes(check.title), `"${check.title}" in\n${run.stdout}`);
    assert.ok(!run.stdout.includes("\u001b["), "no color when stdout is a pipe");
    assert.match(run.stdout, /\d+ ok, \d+ warnings?, 0 failed/);
  });
});
