// Issue 27, the holes that come through the network and model files, probed on the built CLI as
// an attacker would: a mirror that redirects to another host (HF_TOKEN must never follow), a GGUF
// header that lies (the sparse bomb: 8 GiB, n_kv = 1, a string array of 2^62 elements), a server
// whose file is far larger than its header describes, and a URL on HF_ENDPOINT's host. Servers
// are loopback only.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import type { ModelPlanReport } from "../../src/engine/plan/plan-types.js";
import type { Catalog } from "../../src/models/model-catalog.js";
import { ensureFixture } from "../fixtures/gguf/index.js";
import { echoToolYaml } from "../helpers/agents-yaml.js";
import { CliProcess } from "../helpers/cli-process.js";
import { configYaml, localModel } from "../helpers/config-yaml.js";
import { freePort } from "../helpers/free-port.js";
import { findLlamaServerBinary, LLAMA_SERVER_MISSING_MESSAGE } from "../helpers/llama-server-binary.js";
import { fileSource, ModelFileServer, virtualSource } from "../helpers/model-file-server.js";
import { peakRssEnv, readPeakRssMiB } from "../helpers/proc-memory.js";
import { PULL_FIXTURE_SHAPE } from "../helpers/pull-fixtures.js";
import { runCli as runBuiltCli, type CliRun } from "../helpers/run-cli.js";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** Peak RSS a command may reach on the bomb (a plain `plan` of a small model stays well under). */
const RSS_BOUND_MIB = 400;
/** "Within seconds", with room for a shared 2-core machine; today's main runs past it (killed at 90 s). */
const ANSWER_BOUND_MS = 30_000;
/** Peak RSS of a header at the element and byte bounds (measured 233-236 / 236-264 / 294-311 MiB for models, plan, chat). */
const AT_BOUNDS_RSS_MIB = 380;
const TOKEN = "hf_secret_27";

/** The bomb's header: GGUF v3, no tensors, one key whose value is an array of 2^62 strings. */
function bombHeader(): Buffer {
  const u64 = (value: bigint): Buffer => {
    const buffer = Buffer.alloc(8);
    buffer.writeBigUInt64LE(value);
    return buffer;
  };
  const u32 = (value: number): Buffer => Buffer.from(new Uint32Array([value]).buffer);
  return Buffer.concat([Buffer.from("GGUF"), u32(3), u64(0n), u64(1n), u64(1n), Buffer.from("a"), u32(9), u32(8), u64(1n << 62n)]);
}

describe("security: network and model files (issue 27, items 1, 2, 4, 7; built CLI)", () => {
  let dir = "";
  let mirror: ModelFileServer;
  let cdn: ModelFileServer;
  let tiny = "";
  let tinySize = 0;
  let other = "";
  const sha = async (file: string): Promise<string> => createHash("sha256").update(await readFile(file)).digest("hex");
  const folder = (name: string): Promise<string> => mkdtemp(path.join(dir, `${name}-`));
  /** The CLI with a clean env (HF_HOME: no token file of the developer's), its peak RSS and time. */
  const run = async (args: string[], cwd: string, env: Record<string, string> = {}, input?: string): Promise<CliRun & { peakMiB: number | null; ms: number }> => {
    const rssFile = path.join(cwd, `rss-${args[0] ?? "x"}-${Date.now()}`);
    const started = Date.now();
    const result = await runBuiltCli(args, cwd, { env: { HF_HOME: dir, ...peakRssEnv(rssFile), ...env }, timeoutMs: 120_000, ...(input === undefined ? {} : { input }) });
    return { ...result, ms: Date.now() - started, peakMiB: await readPeakRssMiB(rssFile) };
  };
  const bounded = (result: { peakMiB: number | null; ms: number; stderr: string }, what: string, t: TestContext): void => {
    assert.ok(result.peakMiB !== null, `${what}: no peak RSS reported (killed?) ${result.stderr}`);
    t.diagnostic(`${what}: peak RSS ${result.peakMiB.toFixed(0)} MiB, ${result.ms} ms`);
    assert.ok(result.peakMiB < RSS_BOUND_MIB, `${what}: peak RSS ${result.peakMiB.toFixed(0)} MiB`);
    assert.ok(result.ms < ANSWER_BOUND_MS, `${what}: answered after ${result.ms} ms`);
  };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "sec-net-"));
    tiny = await ensureFixture("tiny");
    tinySize = (await stat(tiny)).size;
    other = await ensureFixture("bench", { shape: PULL_FIXTURE_SHAPE });
    [mirror, cdn] = await Promise.all([ModelFileServer.start(), ModelFileServer.start()]);
  });
  after(async () => {
    await Promise.all([mirror.close(), cdn.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("1: a mirror redirecting to another host: pull and plan --model send HF_TOKEN to the mirror only, never to the other host", async () => {
    mirror.gateHub(TOKEN);
    mirror.serveHub("owner", "Redirect-GGUF", "r.Q8_0.gguf", fileSource(tiny, tinySize), "Q8_0");
    mirror.redirect("/owner/Redirect-GGUF/resolve/main/r.Q8_0.gguf", `${cdn.origin}/cdn/blob-r`);
    cdn.serve("/cdn/blob-r", fileSource(tiny, tinySize));
    const env = { HF_ENDPOINT: mirror.origin, HF_TOKEN: TOKEN };
    try {
      for (const command of [["plan", "--json", "--model", "hf:owner/Redirect-GGUF:Q8_0"], ["pull", "hf:owner/Redirect-GGUF:Q8_0"]]) {
        mirror.reset();
        cdn.reset();
        const cwd = await folder(command[0] ?? "x");
        const result = await run(command, cwd, env);
        assert.ok(result.code === 0 || (command[0] === "plan" && result.code === 1), result.stderr);
        assert.ok(cdn.requests.length > 0, `${command[0]} read the file from the other host`);
        assert.deepEqual(cdn.requests.filter((request) => request.authorization !== null), [], `${command[0]}: the other host saw Authorization`);
        assert.ok(mirror.requests.some((request) => request.path.includes("/resolve/main/") && request.authorization === `Bearer ${TOKEN}`), "the mirror (the hub) got the token");
        if (command[0] === "pull") assert.equal(await sha(result.stdout.trim()), await sha(tiny));
      }
      // The stdio pull goes the same way.
      const cwd = await folder("stdio");
      await writeFile(path.join(cwd, "config.yaml"), "app:\n  data_dir: ./data\n  models_dir: ./models\n");
      cdn.reset();
      const proc = new CliProcess(["serve-stdio", "--config", path.join(cwd, "config.yaml")], { env: { HF_HOME: dir, ...env } });
      const answer = await proc.request({ id: "p", method: "pull", params: { ref: "hf:owner/Redirect-GGUF:Q8_0" } }, 120_000);
      assert.equal(answer.type, "result", JSON.stringify(answer));
      proc.endInput();
      await proc.exited;
      assert.ok(cdn.requests.length > 0);
      assert.deepEqual(cdn.requests.filter((request) => request.authorization !== null), [], "stdio pull: the other host saw Authorization");
    } finally {
      mirror.gateHub(null);
    }
  });

  it("2: the sparse GGUF bomb is not a valid GGUF for models --json, plan, chat and doctor, in seconds and bounded memory", async (t) => {
    const cwd = await folder("bomb");
    const models = path.join(cwd, "models");
    await mkdir(models);
    const bomb = path.join(models, "bomb.gguf");
    await writeFile(bomb, bombHeader());
    await truncate(bomb, 8 * GiB);
    // An agent with a tool: doctor's tool check loads each configured model's vocabulary too.
    await writeFile(path.join(cwd, "config.yaml"), `app:\n  data_dir: ./data\n  models_dir: ./models\n${echoToolYaml(bomb)}`);

    const listed = await run(["models", "--json"], cwd);
    bounded(listed, "models --json", t);
    const entry = (JSON.parse(listed.stdout) as Catalog).models.find((model) => model.path === bomb);
    assert.equal(entry?.status, "unreadable");
    assert.match(entry?.problem ?? "", /bomb\.gguf is not a valid GGUF: a declares 4611686018427387904 array elements \(at most 1048576 in one array\)/);

    const plan = await run(["plan", "--json"], cwd);
    bounded(plan, "plan", t);
    assert.equal(plan.code, 1, plan.stderr);
    const planned = (JSON.parse(plan.stdout) as ModelPlanReport).models[0];
    assert.equal(planned?.error?.code, "model_missing");
    assert.equal(planned?.error?.details?.reason, "invalid_gguf");
    assert.match(planned?.error?.message ?? "", /is not a valid GGUF/);

    const chat = await run(["chat"], cwd, {}, "hello\n");
    bounded(chat, "chat", t);
    assert.notEqual(chat.code, 0);
    assert.match(chat.stderr, /bomb\.gguf is not a valid GGUF: a declares 4611686018427387904 array elements/);

    const doctor = await run(["doctor", "--json"], cwd);
    bounded(doctor, "doctor", t);
    const check = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; finding: string; data?: { reason?: string } }> }).checks.find((item) => item.id === "model.default");
    assert.equal(check?.status, "fail");
    assert.equal(check?.data?.reason, "invalid_gguf");
  });

  it("2: a header within the old 64 MiB but past the element bounds (one byte array of 62.9 M elements) is refused in seconds; a header at the bounds stays near 200-300 MiB (issue 33)", async (t) => {
    const u32 = (value: number): Buffer => Buffer.from(new Uint32Array([value]).buffer);
    const u64 = (value: number): Buffer => {
      const buffer = Buffer.alloc(8);
      buffer.writeBigUInt64LE(BigInt(value));
      return buffer;
    };
    const key = (name: string): Buffer => Buffer.concat([u64(name.length), Buffer.from(name)]);
    const commands: Array<[string, string[], string | undefined]> = [["models --json", ["models", "--json"], undefined], ["plan", ["plan", "--json"], undefined], ["chat", ["chat"], "hello\n"]];
    const modelDir = async (name: string, header: Buffer, size: number): Promise<{ cwd: string; file: string }> => {
      const cwd = await folder(name);
      await mkdir(path.join(cwd, "models"));
      const file = path.join(cwd, "models", `${name}.gguf`);
      await writeFile(file, header);
      await truncate(file, size);
      await writeFile(path.join(cwd, "config.yaml"), configYaml({ app: { data_dir: "./data", models_dir: "./models" }, llama: { models: { default: localModel(file) } }, agents: { assistant: { temperature: 0 } } }));
      return { cwd, file };
    };

    // 60 MiB: one uint8 array of 62,914,560 elements (zeros), n_kv = 1; it cost 1.16-1.25 GB and 18-52 s.
    const over = await modelDir("elements", Buffer.concat([Buffer.from("GGUF"), u32(3), u64(0), u64(1), key("a"), u32(9), u32(0), u64(62_914_560)]), 60 * MiB + 64);
    for (const [what, args, input] of commands) {
      const result = await run(args, over.cwd, {}, input);
      bounded(result, `${what} (62.9 M elements)`, t);
      const said = what === "models --json" ? ((JSON.parse(result.stdout) as Catalog).models.find((model) => model.path === over.file)?.problem ?? "") : what === "plan" ? result.stdout : result.stderr;
      assert.match(said, /elements\.gguf is not a valid GGUF: a declares 62914560 array elements \(at most 1048576 in one array\)/, what);
    }

    // At the bounds: 1,572,864 strings of 7 bytes in two arrays (1,048,576 + 524,288), 22.5 MiB, the
    // costliest header found that passes (a real 201 k-token vocabulary with 446 k merges: ~190 MiB).
    const strings = (name: string, count: number): Buffer => {
      const one = Buffer.concat([u64(7), Buffer.from("abcdefg")]);
      const values = Buffer.alloc(one.length * count).fill(one);
      // Distinct ASCII strings, as a vocabulary's are.
      for (let index = 0; index < count; index += 1) values.write(index.toString(36).padStart(7, "0"), index * one.length + 8, "latin1");
      return Buffer.concat([key(name), u32(9), u32(8), u64(count), values]);
    };
    const header = Buffer.concat([Buffer.from("GGUF"), u32(3), u64(0), u64(2), strings("tokens", 1_048_576), strings("merges", 524_288)]);
    const atBounds = await modelDir("at-bounds", header, header.length + 64);
    for (const [what, args, input] of commands) {
      const result = await run(args, atBounds.cwd, {}, input);
      assert.ok(result.peakMiB !== null, `${what}: no peak RSS reported ${result.stderr}`);
      t.diagnostic(`${what} (at the bounds, ${(header.length / MiB).toFixed(1)} MiB): peak RSS ${result.peakMiB.toFixed(0)} MiB, ${result.ms} ms`);
      assert.ok(result.peakMiB < AT_BOUNDS_RSS_MIB, `${what}: peak RSS ${result.peakMiB.toFixed(0)} MiB at the bounds`);
      assert.doesNotMatch(result.stdout + result.stderr, /not a valid GGUF/, `${what}: a header within the bounds passes the check`);
    }
  });

  it("2: the bomb under the llama-server engine: chat refuses it before llama-server reads it", { skip: findLlamaServerBinary() === null ? LLAMA_SERVER_MISSING_MESSAGE : false }, async (t) => {
    const cwd = await folder("bomb-server");
    const bomb = path.join(cwd, "bomb.gguf");
    await writeFile(bomb, bombHeader());
    await truncate(bomb, 8 * GiB);
    const yaml = configYaml({
      app: { data_dir: "./data" },
      llama: { binary: findLlamaServerBinary(), models: { default: localModel(bomb, { engine: "llama-server", port: await freePort() }) } },
      agents: { assistant: { temperature: 0 } },
    });
    await writeFile(path.join(cwd, "config.yaml"), yaml);
    const chat = await run(["chat"], cwd, {}, "hello\n");
    bounded(chat, "chat (llama-server)", t);
    assert.notEqual(chat.code, 0);
    assert.match(chat.stderr, /bomb\.gguf is not a valid GGUF: a declares 4611686018427387904 array elements/);
  });

  it("2: the bomb served over HTTP: plan --model URL and pull stop after one header read, keeping nothing", async (t) => {
    const url = mirror.serve("/files/bomb.gguf", virtualSource(bombHeader(), 8 * GiB));
    for (const command of [["plan", "--json", "--model", url], ["pull", url]]) {
      mirror.reset();
      const cwd = await folder(`remote-${command[0] ?? "x"}`);
      const result = await run(command, cwd);
      bounded(result, command.join(" "), t);
      assert.equal(result.code, 1, result.stderr);
      assert.match(command[0] === "plan" ? result.stdout : result.stderr, /bomb\.gguf is not a valid GGUF: a declares 4611686018427387904 array elements/);
      const { ranged, whole } = mirror.bytesServed();
      assert.ok(ranged + whole <= 4 * MiB, `${command[0]} fetched ${ranged + whole} bytes`);
      t.diagnostic(`${command[0]}: ${ranged + whole} bytes fetched`);
      assert.equal(existsSync(path.join(cwd, "models")) ? (await readdir(path.join(cwd, "models"))).length : 0, 0);
    }
  });

  it("4: a server whose file is far larger than its header describes is refused before the body, --force or not", async (t) => {
    // The tiny model's header and tensors, then zeros: 100 GiB advertised, served lazily.
    const url = mirror.serve("/files/liar.gguf", virtualSource(await readFile(tiny), 100 * GiB));
    for (const force of [false, true]) {
      mirror.reset();
      const cwd = await folder(`liar-${force}`);
      await writeFile(path.join(cwd, "config.yaml"), "app:\n  data_dir: ./data\n  models_dir: ./models\n");
      const result = await run(["pull", url, ...(force ? ["--force"] : [])], cwd);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`the server offers ${100 * GiB} bytes for .*liar\\.gguf but its GGUF header describes \\d+ bytes \\(a file far larger than the model it claims to be\\)`));
      const { ranged, whole } = mirror.bytesServed();
      assert.ok(ranged + whole <= 8 * MiB, `fetched ${ranged + whole} bytes`);
      t.diagnostic(`liar pull${force ? " --force" : ""}: ${ranged + whole} bytes fetched`);
      assert.equal(existsSync(path.join(cwd, "models")) ? (await readdir(path.join(cwd, "models"))).length : 0, 0, "no partial file");
    }
  });

  it("7: a URL on HF_ENDPOINT's host is downloaded exactly as given, not taken for an hf: reference", async () => {
    mirror.reset();
    const url = mirror.serve("/plain/y.gguf", fileSource(tiny, tinySize));
    // What the URL would name as a hub repository ("plain/y.gguf"): a different model.
    mirror.serveHub("plain", "y.gguf", "other.gguf", fileSource(other, (await stat(other)).size), "latest");
    const cwd = await folder("url-on-mirror");
    const result = await run(["pull", url], cwd, { HF_ENDPOINT: mirror.origin });
    assert.equal(result.code, 0, result.stderr);
    const target = result.stdout.trim();
    assert.equal(path.basename(target), "y.gguf");
    assert.equal(await sha(target), await sha(tiny));
    assert.deepEqual(mirror.requests.filter((request) => request.path.startsWith("/v2/") || request.path.includes("/resolve/")), [], "no hub request");
  });

  it("a header read here plans exactly as the file itself (node-llama-cpp's estimates get the header bytes)", async () => {
    const url = mirror.serve("/files/bench.gguf", fileSource(other, (await stat(other)).size));
    const cwd = await folder("same-plan");
    const [local, remote] = await Promise.all([run(["plan", "--json", "--model", other], cwd), run(["plan", "--json", "--model", url], cwd)]);
    const planOf = (result: CliRun): unknown => {
      const entry = (JSON.parse(result.stdout) as ModelPlanReport).models[0];
      return { model: entry?.model, estimates: entry?.plan?.estimates, status: entry?.status };
    };
    assert.deepEqual(planOf(remote), planOf(local));
  });
});
