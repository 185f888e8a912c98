// `local-ai plan` and the stdio `plan` method on the built CLI, against the tiny GGUF fixture.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { PlanReportJson as ModelPlanReport } from "../../src/engine/plan/plan-report-schema.js";
import { CliProcess, protocolViolations } from "../helpers/cli-process.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { runCli } from "../helpers/run-cli.js";

describe("local-ai plan (built CLI)", () => {
  let dir = "";
  let tiny = "";
  const configFile = async (name: string, models: string): Promise<string> => {
    const file = path.join(dir, name);
    await writeFile(file, `app:\n  data_dir: ./data\nllama:\n  binary: ${path.join(dir, "no-llama-server")}\n  models:\n${models}`);
    return file;
  };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "plan-e2e-"));
    tiny = await ensureFixture("tiny");
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("plans the tiny model: exit 0, one JSON report with an ok plan", async () => {
    const config = await configFile("ok.yaml", `    default:\n      path: ${tiny}\n      threads: 2\n`);
    const run = await runCli(["plan", "--json", "--config", config], dir);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout) as ModelPlanReport;
    assert.equal(report.ok, true);
    const entry = report.models[0];
    assert.equal(entry?.name, "default");
    assert.equal(entry?.status, "ok");
    assert.equal(entry?.plan?.ctx_size, 2048);
    assert.equal(entry?.plan?.threads, 2);
    assert.ok((entry?.plan?.estimates.total_bytes ?? 0) > 0);
    assert.match(entry?.plan?.reason ?? "", /fits in/);
    assert.equal(run.stdout.trim(), JSON.stringify(report, null, 2), "nothing but the report on stdout");
  });

  it("prints a human report without --json", async () => {
    const config = await configFile("human.yaml", `    default:\n      path: ${tiny}\n`);
    const run = await runCli(["plan", "--config", config], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Machine: /);
    assert.match(run.stdout, /\+ ok +default \(embedded\): llama, \d+K params, F16, trained ctx 2048\n/);
    assert.match(run.stdout, /plan: gpu_layers \d+\/3, ctx_size 2048, threads \d+/);
    assert.match(run.stdout, /1 model planned: every model fits\.\n$/);
  });

  it("exits 1 with model_missing for a missing file and binary_missing for a llama-server without its binary", async () => {
    const config = await configFile(
      "bad.yaml",
      `    gone:\n      path: ./absent.gguf\n    server:\n      engine: llama-server\n      path: ${tiny}\n      port: 8197\n`,
    );
    const run = await runCli(["plan", "--json", "--config", config], dir);
    assert.equal(run.code, 1);
    const report = JSON.parse(run.stdout) as ModelPlanReport;
    assert.equal(report.ok, false);
    assert.deepEqual(report.models.map((entry) => [entry.name, entry.error?.code]), [["gone", "model_missing"], ["server", "binary_missing"]]);
    const only = JSON.parse((await runCli(["plan", "--json", "--config", config, "--model", "server"], dir)).stdout) as ModelPlanReport;
    assert.deepEqual(only.models.map((entry) => entry.name), ["server"]);
  });

  it("exits 1 with a clear message when the config is missing, as JSON with --json", async () => {
    const missing = path.join(dir, "nope.yaml");
    const human = await runCli(["plan", "--config", missing], dir);
    assert.equal(human.code, 1);
    assert.equal(human.stdout, "");
    assert.match(human.stderr, /^local-ai plan: No config file at .*nope\.yaml/);
    const json = await runCli(["plan", "--json", "--config", missing], dir);
    assert.equal(json.code, 1);
    const body = JSON.parse(json.stdout) as { ok: boolean; error: { code: string; message: string } };
    assert.equal(body.ok, false);
    assert.equal(body.error.code, "config_missing");
  });

  it("exits 2 for an unknown --model, naming the configured ones", async () => {
    const config = await configFile("one.yaml", `    default:\n      path: ${tiny}\n`);
    const run = await runCli(["plan", "--config", config, "--model", "other"], dir);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /Unknown model "other"; configured models: default/);
  });
});

describe("stdio plan method (built CLI)", () => {
  it("plans the default agent's model, one model or all; a model that cannot be planned is an error frame with the report", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "plan-stdio-"));
    try {
      const tiny = await ensureFixture("tiny");
      const config = path.join(dir, "config.yaml");
      await writeFile(config, `app:\n  data_dir: ./data\nllama:\n  models:\n    default:\n      path: ${tiny}\n    gone:\n      path: ./missing.gguf\n`);
      const proc = new CliProcess(["serve-stdio", "--config", config], { cwd: dir });
      const result = await proc.request({ id: 1, method: "plan", params: {} }, 60_000);
      assert.equal(result.type, "result", JSON.stringify(result));
      const report = result.result as ModelPlanReport;
      assert.equal(report.ok, true);
      assert.deepEqual(report.models.map((m) => m.name), ["default"], "plan {} covers the default agent's model only");
      assert.equal(report.models[0]?.plan?.ctx_size, 2048);
      const one = await proc.request({ id: 2, method: "plan", params: { model: "default" } }, 60_000);
      assert.equal((one.result as ModelPlanReport).models.length, 1);
      // The seed's codes: an error frame, with the whole report in details.
      const gone = await proc.request({ id: 3, method: "plan", params: { model: "gone" } }, 60_000);
      assert.equal(gone.type, "error", JSON.stringify(gone));
      assert.equal(gone.code, "model_missing");
      assert.match(String(gone.message), /^Model "gone" cannot be planned: /);
      const goneReport = gone.details as ModelPlanReport;
      assert.equal(goneReport.ok, false);
      assert.deepEqual(goneReport.models.map((m) => [m.name, m.status, m.error?.code]), [["gone", "error", "model_missing"]]);
      const all = await proc.request({ id: 4, method: "plan", params: { all: true } }, 60_000);
      assert.equal(all.type, "error");
      assert.equal(all.code, "model_missing");
      assert.deepEqual((all.details as ModelPlanReport).models.map((m) => [m.name, m.status]), [["default", "ok"], ["gone", "error"]]);
      const both = await proc.request({ id: 5, method: "plan", params: { model: "default", all: true } });
      assert.equal(both.code, "invalid_request");
      const unknown = await proc.request({ id: 6, method: "plan", params: { model: "nope" } });
      assert.equal(unknown.type, "error");
      assert.equal(unknown.code, "invalid_request");
      assert.match(String(unknown.message), /Unknown model "nope"; configured models: default, gone/);
      proc.endInput();
      await proc.exited;
      assert.deepEqual(protocolViolations(proc), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("answers config_missing without a config", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "plan-stdio-"));
    try {
      const proc = new CliProcess(["serve-stdio", "--config", path.join(dir, "absent.yaml")], { cwd: dir });
      const answer = await proc.request({ id: "p", method: "plan" });
      assert.equal(answer.type, "error");
      assert.equal(answer.code, "config_missing");
      proc.endInput();
      await proc.exited;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
