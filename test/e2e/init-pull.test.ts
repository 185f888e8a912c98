// `local-ai init --model REF` downloading the model when asked (--pull, or yes at a terminal),
// after the fit check, from a loopback model server. Nothing leaves the machine.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { spawn as spawnPty } from "@lydell/node-pty";
import { loadConfig } from "../../src/config/load-config.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CLI_PATH } from "../helpers/cli-process.js";
import { fileSource, ModelFileServer, virtualSource } from "../helpers/model-file-server.js";
import { runCli as runBuiltCli, type CliRun } from "../helpers/run-cli.js";
import { hugeModel } from "../helpers/virtual-models.js";
import { waitUntil } from "../helpers/wait-until.js";

describe("local-ai init --model REF: the model downloaded when asked", () => {
  let dir = "";
  let server: ModelFileServer;
  let url = "";
  let hugeUrl = "";
  let digest = "";
  const env = (): Record<string, string | undefined> => ({ PATH: process.env.PATH, HOME: process.env.HOME, HF_HOME: dir, LOCAL_AI_LOG_LEVEL: "warn" });
  const sha = async (file: string): Promise<string> => createHash("sha256").update(await readFile(file)).digest("hex");

  const runCli = (args: string[], cwd: string): Promise<CliRun> => runBuiltCli(args, cwd, { env: { HF_HOME: dir } });

  /** init at a real terminal, answering its question with `answer` (a line) once it is asked. */
  const atTerminal = async (args: string[], cwd: string, answer: string): Promise<{ code: number; screen: string }> => {
    let screen = "";
    const output = new EventEmitter();
    const terminal = spawnPty(process.execPath, [CLI_PATH, ...args], { cwd, cols: 160, rows: 30, env: { ...env(), TERM: "xterm" } });
    const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
    terminal.onData((data) => {
      screen += data;
      output.emit("data");
    });
    try {
      await waitUntil(() => screen.includes("[Y/n]"), [{ emitter: output, event: "data" }], 60_000, () => screen);
      terminal.write(`${answer}\r`);
      return { code: await exited, screen };
    } finally {
      terminal.kill("SIGKILL");
    }
  };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "init-pull-e2e-"));
    const model = await ensureFixture("demo");
    digest = await sha(model);
    server = await ModelFileServer.start();
    url = server.serve("/files/v1/demo-model.gguf", fileSource(model, (await stat(model)).size));
    const huge = hugeModel();
    hugeUrl = server.serve("/files/v1/huge.gguf", virtualSource(huge.header, huge.totalBytes));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("--pull: writes the config, checks the fit, downloads into the config's models_dir; next steps no longer say pull", async () => {
    const cwd = await mkdtemp(path.join(dir, "pull-"));
    server.reset();
    const run = await runCli(["init", "--model", url, "--pull"], cwd);
    assert.equal(run.code, 0, run.stderr);
    const target = path.join(cwd, ".local-ai", "models", "demo-model.gguf");
    const size = (await stat(target)).size;
    assert.equal(await sha(target), digest);
    assert.match(run.stdout, new RegExp(`^Wrote ${escape(path.join(cwd, "config.yaml"))}: model ${escape(url)}, agent assistant, no tools\\.\nModel downloaded: ${escape(target)} \\(\\d+(\\.\\d)? [KM]iB\\)\nNext:\n  local-ai doctor +# check the machine, the config and the model\n  local-ai chat +# chat with the assistant in the terminal\n$`));
    assert.ok(size > 0);
    assert.match(run.stderr, /^Checking http:\/\/127\.0\.0\.1:\d+\/files\/v1\/demo-model\.gguf: reading its GGUF header/m);
    assert.match(run.stderr, /^Fits this machine: /m);
    const state = await loadConfig({ cwd, env: {} });
    assert.equal(state.status, "loaded", JSON.stringify(state));

    // The model is there now: `doctor` finds it through the config's reference.
    const doctor = await runCli(["doctor", "--json"], cwd);
    const report = JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string }> };
    assert.equal(report.checks.find((check) => check.id === "model.default")?.status, "ok", doctor.stdout);

    // --force replaces the config; the model already there costs no download.
    server.reset();
    const again = await runCli(["init", "--force", "--model", url, "--pull"], cwd);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^Model already there: .*demo-model\.gguf/m);
    assert.deepEqual(server.requests, []);
  });

  it("--pull of a model that does not fit: the config is written, nothing is downloaded, exit 1, the next step is pull --force", async () => {
    const cwd = await mkdtemp(path.join(dir, "huge-"));
    server.reset();
    const run = await runCli(["init", "--model", hugeUrl, "--pull"], cwd);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^local-ai init: the config is written but the model was not downloaded: Not downloading .*huge\.gguf: Model default does not fit on this machine/m);
    assert.match(run.stdout, new RegExp(`^  local-ai pull ${escape(hugeUrl)} --force +# download it anyway \\(the fit check says it does not fit this machine\\)$`, "m"));
    assert.ok(existsSync(path.join(cwd, "config.yaml")));
    assert.equal(existsSync(path.join(cwd, ".local-ai", "models")), false, "no file, not even a partial one");
    assert.equal(server.bytesServed().whole, 0);
  });

  it("at a terminal with neither flag it asks: n downloads nothing, Enter (yes) downloads", async () => {
    const no = await mkdtemp(path.join(dir, "ask-no-"));
    server.reset();
    const declined = await atTerminal(["init", "--model", url], no, "n");
    assert.equal(declined.code, 0, declined.screen);
    assert.match(declined.screen, /Download http:\/\/127\.0\.0\.1:\d+\/files\/v1\/demo-model\.gguf now\? It is checked first against this machine \(only its header is read\)\. \[Y\/n\]/);
    assert.match(declined.screen, /local-ai pull http:\/\/127\.0\.0\.1:\d+\/files\/v1\/demo-model\.gguf +# download the model/);
    assert.deepEqual(server.requests, [], "no means not even the fit check");

    const yes = await mkdtemp(path.join(dir, "ask-yes-"));
    const accepted = await atTerminal(["init", "--model", url], yes, "");
    assert.equal(accepted.code, 0, accepted.screen);
    assert.match(accepted.screen, /Model downloaded: .*demo-model\.gguf/);
    assert.equal(await sha(path.join(yes, ".local-ai", "models", "demo-model.gguf")), digest);

    // --no-pull never asks, even at a terminal.
    const never = await mkdtemp(path.join(dir, "no-pull-"));
    const run = await runCli(["init", "--model", url, "--no-pull"], never);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ {2}local-ai pull /m);
  });

  it("without a flag and without a terminal it neither asks nor downloads (scripts)", async () => {
    const cwd = await mkdtemp(path.join(dir, "script-"));
    server.reset();
    const run = await runCli(["init", "--model", url], cwd);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.match(run.stdout, /^ {2}local-ai pull /m);
    assert.deepEqual(server.requests, []);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
