// `local-ai pull`, `plan --model REF` and `models` on the built CLI, against a loopback server that
// serves generated GGUF files with Range support (and the Hugging Face paths node-llama-cpp asks
// for through HF_ENDPOINT). Nothing leaves the machine.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { spawn as spawnPty } from "@lydell/node-pty";
import type { ModelPlanReport } from "../../src/engine/plan/plan-types.js";
import type { Catalog } from "../../src/models/model-catalog.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { CLI_PATH } from "../helpers/cli-process.js";
import { runCli as runBuiltCli, type CliRun } from "../helpers/run-cli.js";
import { fileSource, ModelFileServer, virtualSource } from "../helpers/model-file-server.js";
import { PULL_FIXTURE_SHAPE, partialFileKeptRanges, writeSplitTinyModel } from "../helpers/pull-fixtures.js";
import { hugeModel, midsizeModel } from "../helpers/virtual-models.js";
import { waitUntil } from "../helpers/wait-until.js";

const MiB = 1024 * 1024;

describe("local-ai pull, plan --model REF, models (built CLI, loopback model server)", () => {
  let dir = "";
  let server: ModelFileServer;
  let model = "";
  let size = 0;
  let digest = "";
  let url = "";

  /** The CLI as a user runs it, in `cwd`; a clean env (no token file, no config from the developer). */
  const runCli = (args: string[], cwd: string, env: Record<string, string> = {}): Promise<CliRun> => runBuiltCli(args, cwd, { env: { HF_HOME: dir, ...env } });
  const freshFolder = (name: string): Promise<string> => mkdtemp(path.join(dir, `${name}-`));
  const sha = async (file: string): Promise<string> => createHash("sha256").update(await readFile(file)).digest("hex");

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "pull-e2e-"));
    model = await ensureFixture("bench", { shape: PULL_FIXTURE_SHAPE });
    size = (await stat(model)).size;
    digest = await sha(model);
    server = await ModelFileServer.start();
    url = server.serve("/files/v1/pull-model.gguf", fileSource(model, size));
    server.serveHub("owner", "Pull-Model-GGUF", "pull-model.Q8_0.gguf", fileSource(model, size), "Q8_0");
    const huge = hugeModel();
    server.serve("/files/v1/huge.gguf", virtualSource(huge.header, huge.totalBytes));
    const mid = midsizeModel();
    server.serve("/files/v1/mid.gguf", virtualSource(mid.header, mid.totalBytes));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("pulls a URL: the fit check, then progress on stderr and the path alone on stdout; a second pull downloads nothing", async () => {
    const cwd = await freshFolder("url");
    server.reset();
    // A token in the environment must never reach a host that is not the hub.
    const run = await runCli(["pull", url], cwd, { HF_TOKEN: "hf_secret" });
    assert.equal(run.code, 0, run.stderr);
    const target = path.join(cwd, ".local-ai", "models", "pull-model.gguf");
    assert.equal(run.stdout, `${target}\n`, "stdout is the path and nothing else");
    assert.match(run.stderr, /^Checking http:\/\/127\.0\.0\.1:\d+\/files\/v1\/pull-model\.gguf: reading its GGUF header/m);
    assert.match(run.stderr, /^Fits this machine: llama, \d+M params, F16, trained ctx 2048; /m);
    assert.match(run.stderr, /^Downloading 3\d\.\d MiB to .*pull-model\.gguf$/m);
    assert.match(run.stderr, /^downloaded 100% 3\d\.\d MiB of 3\d\.\d MiB/m, "plain progress lines when stderr is not a terminal");
    assert.ok(!run.stderr.includes("\r") && !run.stderr.includes("\u001b["), "no control characters in a log");
    assert.equal(await sha(target), digest);
    assert.ok(server.requests.every((request) => request.authorization === null), "HF_TOKEN was not sent to a non-hub host");
    assert.deepEqual(await readdir(path.dirname(target)), ["pull-model.gguf"], "no partial file left behind");

    server.reset();
    const again = await runCli(["pull", url], cwd);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, `${target}\n`);
    assert.match(again.stderr, /^Already downloaded: .*pull-model\.gguf \(3\d\.\d MiB\)$/m);
    assert.deepEqual(server.requests, [], "an existing complete file costs no request at all");
  });

  it("pulls hf:owner/repo:QUANT through HF_ENDPOINT as llama.cpp does; HF_TOKEN opens a gated repository", async () => {
    const cwd = await freshFolder("hf");
    const env = { HF_ENDPOINT: server.origin };
    server.gateHub("hf_gate_token");
    try {
      server.reset();
      const refused = await runCli(["pull", "hf:owner/Pull-Model-GGUF:Q8_0"], cwd, env);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /401.*set HF_TOKEN/s);
      assert.equal(existsSync(path.join(cwd, ".local-ai", "models")), false, "nothing downloaded");

      server.reset();
      const run = await runCli(["pull", "hf:owner/Pull-Model-GGUF:Q8_0"], cwd, { ...env, HF_TOKEN: "hf_gate_token" });
      assert.equal(run.code, 0, run.stderr);
      const target = path.join(cwd, ".local-ai", "models", "hf_owner_Pull-Model.Q8_0.gguf");
      assert.equal(run.stdout, `${target}\n`);
      assert.equal(await sha(target), digest);
      const manifest = server.requests.filter((request) => request.path === "/v2/owner/Pull-Model-GGUF/manifests/Q8_0");
      assert.ok(manifest.length > 0, "the manifest was asked for");
      assert.ok(manifest.every((request) => request.userAgent === "llama-cpp"), "with llama.cpp's user agent (the hub then answers ggufFile)");
      const file = server.requests.filter((request) => request.path === "/owner/Pull-Model-GGUF/resolve/main/pull-model.Q8_0.gguf" && request.status === 206);
      assert.ok(file.length > 0 && file.every((request) => request.authorization === "Bearer hf_gate_token"));
    } finally {
      server.gateHub(null);
    }
  });

  it("pulls a split model by hf:owner/repo/file.gguf: every part; models lists it once; a cut part is named", async () => {
    const cwd = await freshFolder("split");
    const parts = await writeSplitTinyModel(dir, "split-tiny");
    for (const part of parts) server.serveHub("owner", "Split-GGUF", path.basename(part), fileSource(part, (await stat(part)).size));
    const run = await runCli(["pull", "hf:owner/Split-GGUF/split-tiny-00001-of-00002.gguf"], cwd, { HF_ENDPOINT: server.origin });
    assert.equal(run.code, 0, run.stderr);
    const first = run.stdout.trim();
    assert.match(first, /\/\.local-ai\/models\/hf_owner_split-tiny-00001-of-00002\.gguf$/);
    const second = first.replace("-00001-of-", "-00002-of-");
    assert.equal(await sha(first), await sha(parts[0]));
    assert.equal(await sha(second), await sha(parts[1]));
    const listed = JSON.parse((await runCli(["models", "--json"], cwd)).stdout) as Catalog;
    const total = (await stat(parts[0])).size + (await stat(parts[1])).size;
    assert.deepEqual(listed.models.map((entry) => [entry.file, entry.parts, entry.bytes, entry.status]), [[path.basename(first), 2, total, "ok"]]);
    await truncate(second, (await stat(second)).size - 100);
    const cut = JSON.parse((await runCli(["models", "--json"], cwd)).stdout) as Catalog;
    assert.equal(cut.models[0]?.status, "truncated");
    assert.match(cut.models[0]?.problem ?? "", /100 bytes missing in part 2; pull it again/);
  });

  it("refuses a model that does not fit before anything is downloaded, from its header alone", async () => {
    const cwd = await freshFolder("huge");
    server.reset();
    const run = await runCli(["pull", `${server.origin}/files/v1/huge.gguf`], cwd);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^local-ai pull: Not downloading .*huge\.gguf: Model default does not fit on this machine .*What would fit: .*\(--force, or force: true, downloads it anyway\)$/m);
    assert.equal(existsSync(path.join(cwd, ".local-ai", "models")), false, "no file, not even a partial one");
    const { ranged, whole } = server.bytesServed();
    assert.equal(whole, 0, "no whole-file request: the download never started");
    assert.ok(server.requests.every((request) => request.range?.startsWith("bytes=0-") === true), "only reads from the start (the header)");
    // node-llama-cpp reads the header with 4 MiB of look-ahead; the file is ~760 GB.
    assert.ok(ranged < 8 * MiB, `${ranged} bytes read`);
  });

  it("plan --model REF plans a model that is not downloaded from a few MiB of its header", async () => {
    const cwd = await freshFolder("plan");
    const mid = midsizeModel();
    server.reset();
    const run = await runCli(["plan", "--json", "--model", `${server.origin}/files/v1/mid.gguf`], cwd);
    assert.ok(run.code === 0 || run.code === 1, run.stderr);
    const report = JSON.parse(run.stdout) as ModelPlanReport;
    const entry = report.models[0];
    assert.equal(entry?.ref, `${server.origin}/files/v1/mid.gguf`);
    assert.equal(entry?.model?.parameters, mid.parameters);
    assert.equal(entry?.model?.architecture, "llama");
    const { ranged, whole } = server.bytesServed();
    assert.equal(whole, 0);
    assert.ok(ranged * 100 < mid.totalBytes, `${ranged} bytes read of ${mid.totalBytes}`);
  });

  it("Ctrl-C mid-download exits 130 keeping a partial file; the next pull fetches only the rest", async () => {
    const cwd = await freshFolder("interrupt");
    const target = path.join(cwd, ".local-ai", "models", "pull-model.gguf");
    const cut = 20 * MiB;
    server.reset();
    server.cutAt(cut);
    let screen = "";
    const terminal = spawnPty(process.execPath, [CLI_PATH, "pull", url], {
      cwd,
      cols: 120,
      rows: 20,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HF_HOME: dir, LOCAL_AI_LOG_LEVEL: "warn", TERM: "xterm" },
    });
    const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
    try {
      // Every download stream stalls at the cut; once the bar shows all the bytes the server
      // sent for the download (the first ranged request was the fit check's header read), the
      // finished chunks are recorded: Ctrl-C then.
      const sent = (): number => server.requests.filter((request) => request.status === 206).slice(1).reduce((sum, request) => sum + request.bytes, 0);
      const shown = (): number => Number([...screen.matchAll(/(\d+\.\d) MiB of/g)].at(-1)?.[1] ?? 0);
      const output = new EventEmitter();
      terminal.onData((data) => {
        screen += data;
        output.emit("data");
      });
      await waitUntil(
        () => server.holding >= 3 && sent() >= cut / 2 && shown() >= sent() / MiB - 0.05,
        [{ emitter: server, event: "hold" }, { emitter: output, event: "data" }],
        90_000,
        () => `holding ${server.holding}, sent ${sent()}, shown ${shown()} MiB: ${screen.slice(-1000)}`,
      );
      terminal.write("\u0003");
      assert.equal(await exited, 130, screen.slice(-2000));
    } finally {
      server.cutAt(null);
      terminal.kill("SIGKILL");
    }
    assert.match(screen, /\[#+-*\] +\d+% /, "a progress bar on a terminal");
    assert.match(screen, /Interrupted\. The partial download is kept \(.*pull-model\.gguf\.ipull\); run `local-ai pull .*` again to resume it\./);
    assert.equal(existsSync(target), false);
    const kept = await partialFileKeptRanges(`${target}.ipull`, size);
    const keptBytes = kept.reduce((sum, range) => sum + range.end - range.start, 0);
    assert.ok(keptBytes >= cut / 2, `whole chunks were kept: ${JSON.stringify(kept)}`);

    server.reset();
    const resumed = await runCli(["pull", url], cwd);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /resuming: \d+\.\d MiB already there/);
    assert.equal(await sha(target), digest);
    // The first ranged read is the fit check's (the header); the rest is the download. None of it
    // asks for a byte the partial file kept: the second serving sends only the rest.
    const download = server.requests.filter((request) => request.status === 206).slice(1);
    for (const request of download) {
      const [start, end] = (request.range ?? "").replace("bytes=", "").split("-").map(Number) as [number, number];
      assert.ok(kept.every((range) => end < range.start || start >= range.end), `${request.range} overlaps a kept chunk ${JSON.stringify(kept)}`);
    }
    const served = download.reduce((sum, request) => sum + request.bytes, 0);
    assert.ok(served >= size - keptBytes && served < size, `${served} bytes served for the ${size - keptBytes} missing`);
  });

  it("a truncated model is reported as such by doctor, plan and models, and pull replaces it", async () => {
    const cwd = await freshFolder("truncated");
    await writeFile(path.join(cwd, "config.yaml"), `llama:\n  models:\n    default:\n      path: ${url}\n      threads: 1\n`);
    const first = await runCli(["pull", url], cwd);
    assert.equal(first.code, 0, first.stderr);
    const target = first.stdout.trim();
    await truncate(target, size - 3 * MiB);

    const doctor = await runCli(["doctor", "--json"], cwd);
    const checks = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; finding: string; fix?: string; data?: { reason?: string } }> }).checks;
    const file = checks.find((check) => check.id === "model.default");
    assert.equal(file?.status, "fail");
    assert.equal(file?.data?.reason, "truncated");
    assert.match(file?.finding ?? "", /is truncated: .* \(3145728 bytes missing\)/);
    assert.equal(file?.fix, `pull it again: \`local-ai pull ${url}\` (the cut file is replaced)`);
    assert.equal(checks.find((check) => check.id === "model.default.plan"), undefined, "the plan check leaves it to the file check");

    const plan = await runCli(["plan", "--json"], cwd);
    assert.equal(plan.code, 1);
    const entry = (JSON.parse(plan.stdout) as ModelPlanReport).models[0];
    assert.equal(entry?.error?.code, "model_missing");
    assert.equal(entry?.error?.details?.reason, "truncated");

    const models = await runCli(["models", "--json"], cwd);
    assert.equal(models.code, 1);
    const listed = (JSON.parse(models.stdout) as Catalog).models.find((item) => item.path === target);
    assert.equal(listed?.status, "truncated");
    assert.deepEqual(listed?.usedBy, ["default"]);

    const again = await runCli(["pull", url], cwd);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /is truncated: .*; downloading it again/);
    assert.equal(await sha(target), digest);
  });

  it("models lists what is downloaded and who uses it; models rm removes a model, not one in use without --force", async () => {
    const cwd = await freshFolder("models");
    await writeFile(path.join(cwd, "config.yaml"), `llama:\n  models:\n    default:\n      path: ${url}\n    later:\n      path: hf:owner/Other-GGUF:Q4_K_M\n`);
    assert.equal((await runCli(["pull", url], cwd)).code, 0);
    const list = await runCli(["models", "--json"], cwd);
    assert.equal(list.code, 0, list.stderr);
    const catalog = JSON.parse(list.stdout) as Catalog;
    assert.equal(catalog.modelsDir, path.join(cwd, ".local-ai", "models"));
    assert.deepEqual(
      catalog.models.map(({ file, bytes, status, architecture, quantization, trainedContext, usedBy }) => ({ file, bytes, status, architecture, quantization, trainedContext, usedBy })),
      [{ file: "pull-model.gguf", bytes: size, status: "ok", architecture: "llama", quantization: "F16", trainedContext: 2048, usedBy: ["default"] }],
    );
    assert.deepEqual(catalog.notDownloaded, [{ model: "later", ref: "hf:owner/Other-GGUF:Q4_K_M" }]);
    const human = await runCli(["models"], cwd);
    assert.match(human.stdout, /^ {2}pull-model\.gguf {2}3\d\.\d MiB {2}llama, \d+M params, F16, trained ctx 2048\n {6}used by: llama\.models\.default$/m);
    assert.match(human.stdout, /not downloaded: llama\.models\.later \(hf:owner\/Other-GGUF:Q4_K_M\): `local-ai pull hf:owner\/Other-GGUF:Q4_K_M`/);
    const doctor = JSON.parse((await runCli(["doctor", "--json"], cwd)).stdout) as { checks: Array<{ id: string; status: string; finding: string; fix?: string }> };
    const later = doctor.checks.find((check) => check.id === "model.later");
    assert.equal(later?.status, "fail");
    assert.match(later?.finding ?? "", /^llama\.models\.later\.path: hf:owner\/Other-GGUF:Q4_K_M is not downloaded yet/);
    assert.equal(later?.fix, "run `local-ai pull hf:owner/Other-GGUF:Q4_K_M`");
    assert.equal(doctor.checks.find((check) => check.id === "model.default")?.status, "ok", "the downloaded reference is found");

    const refused = await runCli(["models", "rm", "pull-model.gguf"], cwd);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /is used by llama\.models\.default; change the config first, or remove it anyway with --force/);
    const outside = await runCli(["models", "rm", "../config.yaml", "--force"], cwd);
    assert.equal(outside.code, 2);
    assert.ok(existsSync(path.join(cwd, "config.yaml")));
    const removed = await runCli(["models", "rm", "pull-model.gguf", "--force"], cwd);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stdout, `removed ${path.join(cwd, ".local-ai", "models", "pull-model.gguf")}\n`);
    assert.deepEqual((JSON.parse((await runCli(["models", "--json"], cwd)).stdout) as Catalog).models, []);
  });
});
