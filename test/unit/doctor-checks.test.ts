import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parseConfigText } from "../../src/config/load-config.js";
import type { Config } from "../../src/config/schema.js";
import { checkLlamaServerBinary } from "../../src/diagnostics/checks/llama-server-binary.js";
import { checkDataDir } from "../../src/diagnostics/checks/data-dir.js";
import { checkModels } from "../../src/diagnostics/checks/models.js";
import { downloadSettingsOf } from "../../src/models/download-settings.js";
import { checkNode, checkSystem, compareVersions, readSystemProbe } from "../../src/diagnostics/checks/system.js";
import { findLlamaServerBinary } from "../helpers/llama-server-binary.js";

const isWindows = process.platform === "win32";

function configOf(yaml: string, baseDir: string): Config {
  const parsed = parseConfigText(yaml, {}, baseDir);
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.config;
}

describe("system checks", () => {
  it("reports OS, CPU, memory and Node, ok on this machine's Node", async () => {
    const results = await checkSystem();
    assert.deepEqual(results.map((r) => r.id), ["system.os", "system.cpu", "system.memory", "system.node"]);
    assert.equal(results[3]?.status, "ok");
    assert.match(results[3]?.finding ?? "", new RegExp(process.versions.node.replace(/\./g, "\\.")));
  });

  it("fails Node below 20.5.0 with a fix and accepts 20.5.0 exactly", () => {
    const old = checkNode("20.4.1");
    assert.equal(old.status, "fail");
    assert.match(old.fix ?? "", /Node\.js 20\.5 or newer/);
    assert.equal(checkNode("20.5.0").status, "ok");
    assert.equal(checkNode("v22.1.0").status, "ok");
    assert.ok(compareVersions("18.19.1", "20.5.0") < 0);
  });

  it("warns below 4 GiB of free memory", async () => {
    const probe = { ...readSystemProbe(), freeMemBytes: 1024 ** 3, totalMemBytes: 8 * 1024 ** 3 };
    const memory = (await checkSystem(probe))[2];
    assert.equal(memory?.status, "warn");
    assert.match(memory?.finding ?? "", /1\.0 GiB free of 8\.0 GiB/);
    assert.match(memory?.fix ?? "", /smaller/);
  });
});

describe("openai model check", () => {
  let server: http.Server;
  let baseUrl = "";
  let lastAuth: string | undefined;

  before(async () => {
    server = http.createServer((request, response) => {
      lastAuth = request.headers.authorization;
      if (request.url === "/v1/models") {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ object: "list", data: [{ id: "qwen", object: "model" }] }));
      } else if (request.url === "/locked/models") {
        response.writeHead(401).end();
      } else if (request.url === "/slow/models") {
        setTimeout(() => response.writeHead(200).end("{}"), 5000).unref();
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const check = async (url: string, model = "qwen", apiKey = "null"): Promise<Awaited<ReturnType<typeof checkModels>>[number]> => {
    const config = configOf(`llama:\n  models:\n    remote:\n      engine: openai\n      base_url: ${url}\n      model: ${model}\n      api_key: ${apiKey}\n`, tmpdir());
    const [result] = await checkModels(config, { settings: downloadSettingsOf(config, {}) });
    assert.ok(result);
    return result;
  };

  it("is ok when /models answers and lists the configured model, sending the api key", async () => {
    const result = await check(`${baseUrl}/v1`, "qwen", "sk-test");
    assert.equal(result.status, "ok", result.finding);
    assert.equal(lastAuth, "Bearer sk-test");
    assert.ok(!JSON.stringify(result).includes("sk-test"), "the api key never appears in the report");
  });

  it("warns when the model is not listed, when credentials are refused, and on a wrong path", async () => {
    const missing = await check(`${baseUrl}/v1`, "llama");
    assert.equal(missing.status, "warn");
    assert.match(missing.finding, /does not list model "llama".*qwen/);
    assert.equal((await check(`${baseUrl}/locked`)).status, "warn");
    assert.match((await check(`${baseUrl}/locked`)).fix ?? "", /api_key/);
    assert.match((await check(`${baseUrl}/nowhere`)).finding, /HTTP 404/);
  });

  it("warns, bounded to about 2 s, when the endpoint does not answer", async () => {
    const started = Date.now();
    const result = await check(`${baseUrl}/slow`);
    assert.ok(Date.now() - started < 4000);
    assert.equal(result.status, "warn");
    assert.match(result.finding, /no answer within 2 s/);
  });

  it("warns when nothing listens at base_url", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await check(`http://127.0.0.1:${port}/v1`);
    assert.equal(result.status, "warn");
    assert.match(result.finding, /connection refused/);
  });
});

describe("llama-server binary check", () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "doctor-binary-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const configFor = (binary: string): Config =>
    configOf(`llama:\n  binary: ${binary}\n  models:\n    local:\n      engine: llama-server\n      path: ./m.gguf\n`, dir);

  async function script(name: string, body: string): Promise<string> {
    const file = path.join(dir, name);
    await writeFile(file, `#!/bin/sh\n${body}\n`);
    await chmod(file, 0o755);
    return file;
  }

  it("is skipped when no model uses llama-server", async () => {
    const config = configOf("llama:\n  binary: nope-xyz\n  models:\n    m:\n      path: ./m.gguf\n", dir);
    assert.deepEqual(await checkLlamaServerBinary(config, { env: {} }), []);
  });

  it("finds a name on PATH and reports the version line from stderr", { skip: isWindows }, async () => {
    await script("llama-server", 'echo "ggml_cuda_init: no devices" >&2\necho "version: 4567 (abc1234)" >&2\necho "built with cc for x86_64" >&2');
    const [result] = await checkLlamaServerBinary(configFor("llama-server"), { env: { PATH: dir } });
    assert.equal(result?.status, "ok", result?.finding);
    assert.match(result?.finding ?? "", /version: 4567 \(abc1234\)/);
    assert.equal(result?.data?.version, "4567 (abc1234)");
  });

  it("fails a binary that exits non-zero, quoting its message", { skip: isWindows }, async () => {
    const file = await script("broken", 'echo "error while loading shared libraries: libcuda.so.1" >&2\nexit 127');
    const [result] = await checkLlamaServerBinary(configFor(file), { env: {} });
    assert.equal(result?.status, "fail");
    assert.match(result?.finding ?? "", /libcuda\.so\.1/);
    assert.match(result?.fix ?? "", /LD_LIBRARY_PATH/);
  });

  it("fails a file that is not executable, and times out a hung one", { skip: isWindows }, async () => {
    const plain = path.join(dir, "plain");
    await writeFile(plain, "not a program");
    const [notExec] = await checkLlamaServerBinary(configFor(plain), { env: {} });
    assert.equal(notExec?.status, "fail");
    assert.match(notExec?.finding ?? "", /not executable/);

    // No `exec`: the sleeping grandchild holds our pipes, so only a process-group kill ends this.
    const hung = await script("hung", "sleep 30\necho done");
    const started = Date.now();
    const [timedOut] = await checkLlamaServerBinary(configFor(hung), { env: {}, versionTimeoutMs: 300 });
    assert.ok(Date.now() - started < 3000);
    assert.equal(timedOut?.status, "fail");
    assert.match(timedOut?.finding ?? "", /did not finish within 0\.3 s/);
  });

  const real = findLlamaServerBinary();
  it("reports the version of a real llama-server", { skip: real === null ? "no llama-server built (npm run build:llama-server)" : false }, async () => {
    const [result] = await checkLlamaServerBinary(configFor(real ?? ""), { env: { PATH: process.env.PATH } });
    assert.equal(result?.status, "ok", result?.finding);
    assert.match(result?.finding ?? "", /version: \S+/);
  });
});

describe("data_dir check: its mode", () => {
  it("warns about a data dir other users can open, with the chmod that fixes it; ok at 0700", { skip: isWindows }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "local-ai-doctor-mode-"));
    await chmod(dataDir, 0o755);
    const open = await checkDataDir(dataDir);
    assert.equal(open.status, "warn", open.finding);
    assert.equal(open.finding.endsWith(`${dataDir} is open to other users (mode 755: they can read, enter it, and list every user and session id)`), true, open.finding);
    assert.equal(open.fix, `chmod 700 ${dataDir} (local-ai makes it 0700 itself the next time it writes there)`);
    assert.equal(open.data?.mode, "755");
    await chmod(dataDir, 0o770);
    assert.match((await checkDataDir(dataDir)).finding, /mode 770: they can read, write, enter it/);
    await chmod(dataDir, 0o700);
    const closed = await checkDataDir(dataDir);
    assert.equal(closed.status === "warn" && /open to other users/.test(closed.finding), false, closed.finding);
    assert.equal(closed.data?.mode, undefined);
    await rm(dataDir, { recursive: true, force: true });
  });
});
