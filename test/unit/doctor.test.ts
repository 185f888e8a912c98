import assert from "node:assert/strict";
import { chmod, copyFile, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { loadConfig, parseConfigText, type ConfigState } from "../../src/config/load-config.js";
import type { CheckResult, DoctorReport } from "../../src/diagnostics/doctor-report.js";
import { runDoctor } from "../../src/diagnostics/run-doctor.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { freePort } from "../helpers/free-port.js";


function find(report: DoctorReport, id: string): CheckResult {
  const check = report.checks.find((candidate) => candidate.id === id);
  assert.ok(check, `check ${id} in ${report.checks.map((c) => c.id).join(", ")}`);
  return check;
}

describe("runDoctor", () => {
  let dir = "";
  const reports: DoctorReport[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "doctor-"));
    await copyFile(await ensureFixture("tiny"), path.join(dir, "model.gguf"));
    await writeFile(path.join(dir, "notes.txt"), "this is not a model\n");
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function stateFor(yaml: string): Promise<ConfigState> {
    const parsed = parseConfigText(yaml, {}, dir);
    assert.ok(parsed.ok, `config parses: ${JSON.stringify(parsed)}`);
    return { status: "loaded", path: path.join(dir, "config.yaml"), source: "flag", config: parsed.config };
  }

  async function doctor(configState: ConfigState, options: { checkTimeoutMs?: number } = {}): Promise<DoctorReport> {
    const report = await runDoctor({ configState, version: "9.9.9", env: { PATH: process.env.PATH } }, options);
    reports.push(report);
    return report;
  }

  async function validYaml(extraModels = ""): Promise<string> {
    return [
      "app:",
      "  data_dir: ./data",
      "llama:",
      "  models:",
      "    default:",
      "      engine: embedded",
      "      path: ./model.gguf",
      extraModels,
      "agents:",
      "  assistant:",
      "    model: default",
      "http:",
      `  port: ${await freePort()}`,
    ].join("\n");
  }

  it("fails the config check with a fix when the config is missing, and skips config-bound checks", async () => {
    const state = await loadConfig({ flag: path.join(dir, "absent.yaml"), env: {}, cwd: dir });
    const report = await doctor(state);
    assert.equal(report.ok, false);
    const config = find(report, "config");
    assert.equal(config.status, "fail");
    assert.match(config.finding, /absent\.yaml/);
    assert.match(config.fix ?? "", /config\.example\.yaml.*--config/);
    assert.deepEqual(config.data, { path: path.join(dir, "absent.yaml"), source: "flag" });
    assert.ok(!report.checks.some((check) => check.id.startsWith("model.") || check.id === "data_dir"));
    assert.ok(["system.os", "system.cpu", "system.memory", "system.node"].every((id) => report.checks.some((c) => c.id === id)));
    assert.equal(report.summary.fail, report.checks.filter((c) => c.status === "fail").length);
    assert.equal(report.version, "9.9.9");
  });

  it("names the first problem and the count for an invalid config, with every problem in data", async () => {
    const file = path.join(dir, "bad.yaml");
    await writeFile(file, "app:\n  max_steps: zero\n  colour: red\nhttp:\n  port: 99999\n");
    const report = await doctor(await loadConfig({ flag: file, env: {}, cwd: dir }));
    const config = find(report, "config");
    assert.equal(config.status, "fail");
    assert.match(config.finding, /bad\.yaml:\d+: app\.\S+/);
    assert.match(config.finding, /and 2 more problems/);
    const problems = config.data?.problems as { path: string; line?: number }[];
    assert.equal(problems.length, 3);
    assert.ok(problems.every((problem) => typeof problem.line === "number"));
  });

  it("passes a valid config with a real GGUF header and a writable data dir", async () => {
    const report = await doctor(await stateFor(await validYaml()));
    const model = find(report, "model.default");
    assert.equal(model.status, "ok", model.finding);
    assert.match(model.finding, /GGUF v3, \d+(\.\d+)? KiB/);
    assert.equal(model.data?.size_bytes, (await stat(await ensureFixture("tiny"))).size);
    assert.equal(find(report, "config").status, "ok");
    assert.equal(find(report, "data_dir").status === "fail", false);
    assert.equal(find(report, "port.http").status, "ok");
    assert.ok(!report.checks.some((check) => check.id === "llama_server.binary"), "no binary check without a llama-server model");
    assert.equal(report.ok, true, JSON.stringify(report.checks.filter((c) => c.status === "fail")));
    assert.doesNotThrow(() => JSON.stringify(report), "the report is plain JSON (no bigint)");
  });

  it("fails a config with no agents, as the serve commands would refuse it", async () => {
    const yaml = (await validYaml()).replace("agents:\n  assistant:\n    model: default\n", "");
    const report = await doctor(await stateFor(yaml));
    const config = find(report, "config");
    assert.equal(config.status, "fail");
    assert.match(config.finding, /has no agents: serve-http and serve-socket refuse to start/);
    assert.ok((config.fix ?? "").includes("agents:\n  assistant:\n    model: default"), config.fix);
    assert.equal(report.ok, false);
  });

  it("fails a model that is not a GGUF file, naming the reason", async () => {
    const report = await doctor(await stateFor((await validYaml()).replace("./model.gguf", "./notes.txt")));
    const model = find(report, "model.default");
    assert.equal(model.status, "fail");
    assert.match(model.finding, /not a GGUF file/);
    assert.equal(model.data?.reason, "bad_magic");
    assert.match(model.fix ?? "", /llama\.models\.default\.path/);
    assert.equal(report.ok, false);
  });

  it("fails a missing model file with a fix naming the path", async () => {
    const report = await doctor(await stateFor((await validYaml()).replace("./model.gguf", "./gone.gguf")));
    const model = find(report, "model.default");
    assert.equal(model.status, "fail");
    assert.match(model.finding, /no file at .*gone\.gguf/);
    assert.match(model.fix ?? "", /gone\.gguf/);
  });

  it("fails a data_dir below a regular file", async () => {
    const report = await doctor(await stateFor((await validYaml()).replace("./data", "./notes.txt/data")));
    const dataDir = find(report, "data_dir");
    assert.equal(dataDir.status, "fail");
    assert.match(dataDir.finding, /notes\.txt is a file/);
    assert.match(dataDir.fix ?? "", /app\.data_dir/);
    assert.equal(report.ok, false);
  });

  it("fails a data_dir that is not writable", { skip: process.getuid?.() === 0 ? "root can write anywhere" : false }, async () => {
    const locked = path.join(dir, "locked");
    await rm(locked, { recursive: true, force: true });
    await import("node:fs/promises").then((fs) => fs.mkdir(locked));
    await chmod(locked, 0o555);
    try {
      const report = await doctor(await stateFor((await validYaml()).replace("./data", "./locked")));
      assert.equal(find(report, "data_dir").status, "fail");
      assert.match(find(report, "data_dir").finding, /not writable: permission denied/);
    } finally {
      await chmod(locked, 0o755);
    }
  });

  it("fails a llama-server model whose binary is not installed", async () => {
    const yaml = (await validYaml(`    local:\n      engine: llama-server\n      path: ./model.gguf\n      port: ${await freePort()}`)).replace(
      "llama:\n",
      "llama:\n  binary: definitely-not-a-binary-xyz\n",
    );
    const report = await doctor(await stateFor(yaml));
    const binary = find(report, "llama_server.binary");
    assert.equal(binary.status, "fail");
    assert.match(binary.finding, /definitely-not-a-binary-xyz.*not found on PATH/);
    assert.match(binary.fix ?? "", /llama\.binary/);
    assert.match(binary.fix ?? "", /npm run build:llama-server/);
    assert.equal(find(report, "model.local").status, "ok");
    assert.equal(find(report, "port.model.local").status, "ok");
    assert.equal(report.ok, false);
  });

  it("warns (does not fail) when a port is held by a listening server, naming the key to change", async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const { port } = holder.address() as net.AddressInfo;
    try {
      const yaml = (await validYaml()).replace(/port: \d+$/, `port: ${port}`);
      const report = await doctor(await stateFor(yaml));
      const check = find(report, "port.http");
      assert.equal(check.status, "warn");
      assert.match(check.finding, new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
      assert.match(check.fix ?? "", /http\.port/);
      assert.equal(report.ok, true, "a busy port alone does not fail doctor");
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it("fails two llama-server models configured on the same port", async () => {
    const port = await freePort();
    const models = [
      `    a:\n      engine: llama-server\n      path: ./model.gguf\n      port: ${port}`,
      `    b:\n      engine: llama-server\n      path: ./model.gguf\n      port: ${port}`,
    ].join("\n");
    const report = await doctor(await stateFor(await validYaml(models)));
    assert.equal(find(report, "port.model.a").status, "fail");
    assert.match(find(report, "port.model.a").finding, /llama\.models\.a\.port and llama\.models\.b\.port are both/);
  });

  it("bounds a hung llama-server binary so doctor still finishes", { skip: process.platform === "win32" }, async () => {
    const script = path.join(dir, "hung-llama-server");
    await writeFile(script, "#!/bin/sh\nsleep 30\n");
    await chmod(script, 0o755);
    const yaml = (await validYaml(`    local:\n      engine: llama-server\n      path: ./model.gguf\n      port: ${await freePort()}`)).replace(
      "llama:\n",
      `llama:\n  binary: ${script}\n`,
    );
    const started = Date.now();
    const report = await doctor(await stateFor(yaml), { checkTimeoutMs: 1500 });
    assert.ok(Date.now() - started < 4500, "finished before the 5 s --version timeout");
    const binary = find(report, "llama_server.binary");
    assert.equal(binary.status, "fail");
    assert.match(binary.finding, /did not finish within 1\.5 s/);
    assert.match(binary.fix ?? "", /llama\.binary hangs/);
  });

  it("gives every non-ok check a fix", () => {
    assert.ok(reports.length >= 8);
    for (const check of reports.flatMap((report) => report.checks)) {
      if (check.status !== "ok") assert.ok((check.fix ?? "").length > 10, `${check.id} has a fix`);
      assert.ok(!check.finding.includes("\n"), `${check.id} finding is one line`);
    }
  });
});
