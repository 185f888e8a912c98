import assert from "node:assert/strict";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { Command } from "commander";
import type { CliDeps } from "../../src/cli/cli-deps.js";
import { registerDoctorCommand } from "../../src/cli/commands/doctor.js";
import type { DoctorReport } from "../../src/diagnostics/doctor-report.js";
import { ensureFixture } from "../fixtures/gguf/index.js";

interface Run {
  stdout: string;
  stderr: string;
  exitCode: number | undefined;
}

/** Runs the command in process with injected streams, as main.ts would with the real ones. */
async function run(args: string[], cwd: string, options: { tty?: boolean; globalConfig?: boolean } = {}): Promise<Run> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks = { out: [] as Buffer[], err: [] as Buffer[] };
  stdout.on("data", (chunk: Buffer) => chunks.out.push(chunk));
  stderr.on("data", (chunk: Buffer) => chunks.err.push(chunk));
  let exitCode: number | undefined;
  const deps: CliDeps = {
    env: { PATH: process.env.PATH },
    cwd,
    stdout,
    stderr,
    stdoutIsTTY: options.tty ?? false,
    version: "1.2.3",
    // doctor prints through stdout above; it never touches the process's own streams.
    io: process,
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  const program = new Command("local-ai").exitOverride();
  if (options.globalConfig === true) program.option("--config <file>", "config file");
  registerDoctorCommand(program, deps);
  await program.parseAsync(args, { from: "user" });
  return { stdout: Buffer.concat(chunks.out).toString("utf8"), stderr: Buffer.concat(chunks.err).toString("utf8"), exitCode };
}

describe("doctor command", () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "doctor-cmd-"));
    await copyFile(await ensureFixture("tiny"), path.join(dir, "model.gguf"));
    // A random high port: doctor only binds and closes it, and a busy one would only warn.
    const port = 20000 + Math.floor(Math.random() * 20000);
    await writeFile(path.join(dir, "config.yaml"), `app:\n  data_dir: ./data\nllama:\n  models:\n    default:\n      path: ./model.gguf\nagents:\n  assistant:\n    model: default\nhttp:\n  port: ${port}\n`);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("prints one JSON report with --json and exits 0 when nothing fails", async () => {
    const result = await run(["doctor", "--json", "--config", "config.yaml"], dir);
    const report = JSON.parse(result.stdout) as DoctorReport;
    assert.equal(report.ok, true, result.stdout);
    assert.equal(report.version, "1.2.3");
    assert.ok(report.checks.some((check) => check.id === "model.default" && check.status === "ok"));
    assert.equal(result.exitCode, 0);
    assert.equal(result.stderr, "");
  });

  it("exits 1 when the config is missing, and reads --config given before the command name", async () => {
    const result = await run(["--config", "absent.yaml", "doctor", "--json"], dir, { globalConfig: true });
    const report = JSON.parse(result.stdout) as DoctorReport;
    assert.equal(report.ok, false);
    assert.match(report.checks.find((check) => check.id === "config")?.finding ?? "", /absent\.yaml \(from --config\)/);
    assert.equal(result.exitCode, 1);
  });

  it("also reads --config after the command name when the program defines it globally", async () => {
    const result = await run(["doctor", "--config", "absent.yaml", "--json"], dir, { globalConfig: true });
    assert.match(result.stdout, /absent\.yaml/);
    assert.equal(result.exitCode, 1);
  });

  it("prints the human table without --json, colored only on a TTY", async () => {
    const plain = await run(["doctor", "--config", "config.yaml"], dir);
    assert.match(plain.stdout, /CHECK +FINDING/);
    assert.match(plain.stdout, /Model default/);
    assert.ok(!plain.stdout.includes("\u001b["));
    assert.throws(() => JSON.parse(plain.stdout) as unknown);
    const colored = await run(["doctor", "--config", "config.yaml"], dir, { tty: true });
    assert.ok(colored.stdout.includes("\u001b["));
  });
});
