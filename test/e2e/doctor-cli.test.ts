import assert from "node:assert/strict";
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { DoctorReport } from "../../src/diagnostics/doctor-report.js";
import { findLocalBuild } from "../../src/engine/llama-binary.js";
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

  it("says which binary the embedded engine runs: the local OpenMP build when there is one, else the prebuilt", async () => {
    const local = await findLocalBuild();
    const report = JSON.parse((await runCli(["doctor", "--json", "--config", config], dir)).stdout) as DoctorReport;
    const check = report.checks.find((candidate) => candidate.id === "embedded.binary");
    assert.equal(check?.status, "ok", JSON.stringify(check));
    assert.equal(check?.data?.choice, "auto");
    if (check?.data?.backend !== "cpu") {
      // A GPU backend goes first; the local build is CPU only.
      assert.match(check?.finding ?? "", /^node-llama-cpp's prebuilt \w+ binary: a GPU backend goes first/);
    } else if (local === null) {
      assert.deepEqual([check?.data?.kind, check?.data?.openmp, check?.data?.auto_threads], ["prebuilt", false, Math.max(1, Number(report.checks.find((c) => c.id === "gpu")?.data?.cpu_math_cores) - 1)]);
      assert.match(check?.finding ?? "", /^node-llama-cpp's prebuilt CPU binary: no local build \(`npm run build:embedded` makes one with OpenMP: docs\/engines\.md\); OpenMP off, threads: auto = \d+$/);
    } else {
      assert.deepEqual([check?.data?.kind, check?.data?.openmp, check?.data?.local_build], ["local", true, local.dir]);
      assert.deepEqual(check?.data?.cmake_options, ["GGML_NATIVE=ON", "GGML_OPENMP=ON"]);
      assert.match(check?.finding ?? "", /^local build of `npm run build:embedded` \(GGML_NATIVE=ON GGML_OPENMP=ON\), picked by llama\.embedded_binary: auto; OpenMP on, threads: auto = \d+$/);
    }
  });

  it("reports the prebuilt binary when llama.embedded_binary is prebuilt", async () => {
    const prebuiltConfig = path.join(dir, "prebuilt.yaml");
    await writeFile(prebuiltConfig, (await readFile(config, "utf8")).replace("llama:\n", "llama:\n  embedded_binary: prebuilt\n"));
    const report = JSON.parse((await runCli(["doctor", "--json", "--config", prebuiltConfig], dir)).stdout) as DoctorReport;
    const check = report.checks.find((candidate) => candidate.id === "embedded.binary");
    assert.deepEqual([check?.status, check?.data?.choice, check?.data?.kind, check?.data?.openmp], ["ok", "prebuilt", "prebuilt", false], JSON.stringify(check));
    if (check?.data?.backend === "cpu") assert.match(check?.finding ?? "", /^node-llama-cpp's prebuilt CPU binary, because llama\.embedded_binary is prebuilt( \(a local build exists, unused\))?: OpenMP off, threads: auto = \d+$/);
    assert.equal(report.checks.find((candidate) => candidate.id === "node_llama_cpp")?.data?.build_type, "prebuilt");
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

  it("shows the memory budget (auto here: what is free less the margin) and what the model needs of it, in text and --json", async () => {
    const json = JSON.parse((await runCli(["doctor", "--json", "--config", config], dir)).stdout) as DoctorReport;
    const budget = json.checks.find((check) => check.id === "memory.budget");
    assert.equal(budget?.status, "ok", JSON.stringify(budget));
    const data = budget.data as { ram_bytes: number; ram: { setting: string; free_bytes: number; margin_bytes: number }; need: { ram_bytes: number }; models: Record<string, { ram_bytes: number }>; all_fit: boolean };
    assert.equal(data.ram.setting, "auto");
    assert.equal(data.ram_bytes, Math.max(0, data.ram.free_bytes - data.ram.margin_bytes));
    assert.ok((data.models.default?.ram_bytes ?? 0) > 0 && data.need.ram_bytes === data.models.default?.ram_bytes, JSON.stringify(data));
    assert.equal(data.all_fit, true);
    assert.match(budget.finding, /^RAM .* \(auto: .* free less .* margin\), VRAM .*; the model needs .* RAM and .* VRAM: all can be loaded at once$/);
    const run = await runCli(["doctor", "--config", config], dir);
    assert.match(run.stdout, /Memory budget +RAM .* \(auto: /);
  });
});
